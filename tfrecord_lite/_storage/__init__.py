"""Where bytes live: local paths, URLs through fsspec, ranged reads, atomic publishing, inputs."""
