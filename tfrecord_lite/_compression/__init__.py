"""GZIP / ZLIB: which zlib implementation inflates and deflates, and the streaming inflater."""
