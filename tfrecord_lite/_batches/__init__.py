"""The batch decoder and encoder: many records at once with numpy, in lockstep, into columns (dense,
ragged, sparse, flat) and SequenceExample steps; many Examples encoded from columns at once."""
