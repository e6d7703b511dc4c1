"""``python -m geon``: see :mod:`geon.cli`."""

import sys

from geon.cli import main

sys.exit(main())
