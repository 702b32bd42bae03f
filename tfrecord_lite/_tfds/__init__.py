"""TensorFlow Datasets folders without TensorFlow: metadata, feature connectors, split strings,
decoding and reading (the public names are tfrecord_lite.tfds')."""
