"""``python -m geon``: see :mod:`geon.cli`."""

import sys

from geon.cli import main
from geon.core.collector import tune_for_documents

tune_for_documents()
sys.exit(main())
