"""What a data loader hands on: items made from decoded records, batches collated, and the transport
that carries batches from worker processes."""
