"""The TensorProto codec: arrays as the bytes of `tf.io.serialize_tensor`, and back."""
