"""TensorBoard logs: events files decoded without TensorFlow, logdirs as runs, tailing, writing."""
