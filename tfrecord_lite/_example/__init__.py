"""The single-record codec: tf.train.Example / SequenceExample protos as bytes and back, the specs that
say what to decode, sparse and ragged values."""
