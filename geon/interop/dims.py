"""Lengths for a model's named dims (``dim_param``), as a person writes them: ``batch=8``.

The one reading of them, for the CLI's ``--dim NAME=N`` (one item per flag) and the import
endpoint's ``dims`` field (``"batch=8, seq=16"``, comma-separated).

>>> parse_dims(["batch=8", " seq = 16 "])
{'batch': 8, 'seq': 16}
>>> try:
...     parse_dims(["batch=0"])
... except DimsError as error:
...     print(error)
dims item "batch=0" is invalid; expected NAME=N with 1 <= N <= 2147483647, e.g. "batch=8"
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from geon.core.errors import GeonError

__all__ = ["MAX_DIM", "MAX_DIMS", "DimsError", "parse_dims", "split_dims"]

MAX_DIM = 2**31 - 1
"""The largest length a dim may be given."""

MAX_DIMS = 64
"""The most names one import may bind."""


class DimsError(GeonError):
    """A dims item that is not ``NAME=N`` with ``1 <= N <= MAX_DIM``, or too many of them."""


def split_dims(text: str) -> list[str]:
    """The items of a comma-separated ``dims`` text: ``"batch=8, seq=16"``."""
    return [item for item in (part.strip() for part in text.split(",")) if item]


def parse_dims(items: Sequence[str]) -> dict[str, int]:
    """``{name: length}`` of ``NAME=N`` items (spaces around either side are ignored); a
    :class:`DimsError` naming the first bad item, or the count when there are more than
    :data:`MAX_DIMS`."""
    if len(items) > MAX_DIMS:
        raise DimsError(f"dims binds {len(items)} names; at most {MAX_DIMS} are allowed")
    dims: dict[str, int] = {}
    for item in items:
        name, _, value = (part.strip() for part in item.partition("="))
        if not name or not re.fullmatch(r"[0-9]{1,10}", value) or not 1 <= int(value) <= MAX_DIM:
            raise DimsError(
                f'dims item "{item[:80]}" is invalid; expected NAME=N with 1 <= N <= {MAX_DIM}, '
                'e.g. "batch=8"'
            )
        dims[name[:128]] = int(value)
    return dims
