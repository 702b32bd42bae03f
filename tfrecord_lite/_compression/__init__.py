"""Which zlib implementation inflates and deflates GZIP / ZLIB streams."""
