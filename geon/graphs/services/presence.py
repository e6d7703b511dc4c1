"""Presence (DESIGN.md §6 ``presence``): who is connected to each graph, with their selection
and cursor, kept per process (:data:`PRESENT`). With several web processes behind the Redis
channel layer, ``presence`` events still reach every client, but a ``snapshot``'s ``present``
lists only the clients this process knows: its own, and the others it heard from since (best
effort).

>>> arrive("g", {"client": "c1", "user": "ann"}); present("g")
[{'client': 'c1', 'user': 'ann'}]
>>> depart("g", "c1"), present("g")
(True, [])
"""

from __future__ import annotations

from typing import Any

#: The clients connected to each graph in this process: graph id -> client id -> entry.
PRESENT: dict[str, dict[str, dict[str, Any]]] = {}


def arrive(graph_id: str, entry: dict[str, Any]) -> None:
    """A client of this process connected (``entry["client"]`` is its id)."""
    PRESENT.setdefault(graph_id, {})[entry["client"]] = entry


def depart(graph_id: str, client: str) -> bool:
    """A client of this process left; whether it was present (then the others hear it)."""
    clients = PRESENT.get(graph_id, {})
    was_present = clients.pop(client, None) is not None
    if not clients:
        PRESENT.pop(graph_id, None)
    return was_present


def heard(graph_id: str, message: dict[str, Any], *, listening: bool) -> None:
    """Another client's ``presence`` message reached a client of this process (``listening``:
    one still on the graph): track the other client here too, or forget it when it left."""
    if listening and message["event"] != "leave":
        entry = {k: v for k, v in message.items() if k not in ("type", "event")}
        PRESENT.setdefault(graph_id, {}).setdefault(message["client"], {}).update(entry)
    elif message["event"] == "leave":
        PRESENT.get(graph_id, {}).pop(message["client"], None)


def present(graph_id: str) -> list[dict[str, Any]]:
    """The clients of the graph this process knows, as a ``snapshot``'s ``present`` lists them."""
    return list(PRESENT.get(graph_id, {}).values())
