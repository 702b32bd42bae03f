# `python -m tfrecord_lite ...` runs the `tfrecord-lite` command line.
from .cli import main

raise SystemExit(main())
