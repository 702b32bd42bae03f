"""`python -m tfrecord_lite ...` runs the `tfrecord-lite` command line."""

from tfrecord_lite.cli import main

raise SystemExit(main())
