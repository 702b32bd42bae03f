"""Dataset statistics: one streaming pass summarised by mergeable accumulators and sketches;
the result as JSON, HTML and TFDV statistics."""
