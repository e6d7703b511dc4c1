"""The fields of a run or render request as the user wrote them: a version number, integers
(seeds, plan ids) and booleans, each refused with :class:`RunRefused` naming the field."""

from __future__ import annotations

from typing import Any

from geon.core.errors import quote
from geon.core.limits import INT64_MAX
from geon.graphs.models import Graph, GraphVersion
from geon.graphs.services import version_of
from geon.runs.services.errors import RunRefused


def check_version(graph: Graph, number: Any) -> GraphVersion:
    """The graph's version ``number`` (``None``: the current one); an unknown number raises
    :class:`~geon.graphs.services.VersionNotFound` (a 404, as everywhere in the API)."""
    current = graph.current_version
    assert current is not None  # check_can_view refuses graphs without a version
    if number is None or number == "":
        return current
    wanted = check_int("version", number, minimum=1, example="1")
    return current if wanted == current.number else version_of(graph, wanted)


def check_int(name: str, value: Any, *, minimum: int, example: str) -> int:
    """``value`` as an integer from ``minimum`` to the largest the database's 64-bit columns
    hold: an int, an integral float (JSON's 3.0) or a decimal string."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():  # JSON's 3.0 is the integer 3
        number = int(value)
    elif isinstance(value, str) and value.strip().isdecimal():
        number = int(value.strip())
    if number is None or number < minimum or number > INT64_MAX:
        raise RunRefused(
            "invalid_request",
            f"{name} {quote(value)} is not valid; expected an integer from {minimum} to "
            f"{INT64_MAX} such as {example}",
        )
    return number


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a boolean: a JSON boolean, or ``true``/``1``/``false``/``0`` in a form."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0"):
        return False
    raise RunRefused(
        "invalid_request", f"{name} {quote(value)} is not valid; expected true or false"
    )
