"""How every verb refuses: one line on stderr, ``geon VERB: message``, and exit status 2.

>>> fail("run", 'cannot read "in\\r.npz"')
2

A control character or line break in the message (a file name, a model's text) is written as its
escape, so a refusal is always one line that a terminal shows as it is.
"""

from __future__ import annotations

import sys

from geon.core.nodes import shown_text


def fail(verb: str, message: str, status: int = 2) -> int:
    """Print ``geon VERB: message`` (escaped) on stderr; ``status``, for ``main`` to exit with."""
    print(f"geon {verb}: {shown_text(message, limit=len(message))[1:-1]}", file=sys.stderr)
    return status
