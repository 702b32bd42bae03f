"""The data model's codec: tf.train.Example / SequenceExample protos as bytes, specs, batch decoding."""
