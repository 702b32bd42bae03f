"""Images in records: the image codec, image records, packing a folder into shards, appending to and
removing from a packed dataset, augmentation, label maps."""
