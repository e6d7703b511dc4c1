"""Reading the JSON files the verbs take, with one-line reasons for the user.

>>> read_json("/nonexistent/doc.json")
Traceback (most recent call last):
...
OSError: cannot read "/nonexistent/doc.json": No such file or directory
"""

from __future__ import annotations

import json
from typing import Any


def read_json(path: str) -> Any:
    """The JSON in ``path``; :class:`OSError` or :class:`ValueError` with a one-line reason."""
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except OSError as exc:
        raise OSError(f'cannot read "{path}": {exc.strerror or exc}') from None
    except (ValueError, RecursionError) as exc:
        raise ValueError(f'"{path}" is not valid JSON: {exc}') from None
