"""geon.learn.content: puzzles with property checks (issue 19; see ``README.md`` here).

:func:`check_puzzle` runs a student's graph and a puzzle's hidden reference on many draws of
axis lengths and random values and explains the first difference in axis names;
``python -m geon puzzle check`` is its CLI. The package imports :mod:`geon.core` and
:mod:`geon.execute`, never Django.
"""

from geon.learn.content.puzzles import (
    MAX_AXIS_LENGTH,
    MAX_CELLS,
    MAX_DRAWS,
    PuzzleError,
    PuzzleResult,
    check_puzzle,
    read_puzzle,
)

__all__ = [
    "MAX_AXIS_LENGTH",
    "MAX_CELLS",
    "MAX_DRAWS",
    "PuzzleError",
    "PuzzleResult",
    "check_puzzle",
    "read_puzzle",
]
