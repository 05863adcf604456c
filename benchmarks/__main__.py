"""``python -m benchmarks SUITE [ARGS ...]``: :mod:`benchmarks.cli`."""

import sys

from benchmarks.cli import main

sys.exit(main())
