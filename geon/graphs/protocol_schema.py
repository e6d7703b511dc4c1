"""The websocket protocol's schemas (:mod:`geon.graphs.protocol`) as one JSON Schema document,
from which ``make protocol`` generates the editor's types (``frontend/src/sync/protocol.ts``,
through ``frontend/scripts/protocol.mjs``). ``python -m geon.graphs.protocol_schema`` prints it.

Each message becomes a definition named ``<Type>Message`` (``Client<Type>Message`` where both
sides send the type); the schemas the protocol shares by name (:data:`SHARED`) become
definitions of their own, so each is one TypeScript type. Where the protocol checks only the
envelope of a value whose format has its own schema (the LoomGraph document, its issues, the
node ops), the generated type names the editor's model type for it (:data:`MODEL_TYPES`).

>>> document = protocol_document()
>>> [ref["$ref"] for ref in document["$defs"]["ClientMessage"]["anyOf"]]
['#/$defs/EditMessage', '#/$defs/ClientPresenceMessage', '#/$defs/PingMessage']
>>> document["$defs"]["RunMessage"]["properties"]["run"]
{'$ref': '#/$defs/RunInfo'}
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

from geon.graphs import protocol

#: The shared schemas that get a type of their own, by the name of that type.
SHARED: dict[str, dict[str, Any]] = {
    "RunInfo": protocol.RUN,
    "IssueCounts": protocol.ISSUE_COUNTS,
    "Cursor": protocol.CURSOR,
    "ReviewSummary": protocol.REVIEW,
    "LivePlanCost": protocol.PLAN_COST,
}

#: Values whose schema in the protocol is only an envelope, and the editor's type for them:
#: (definition, path of property names and ``items``) -> TypeScript type. The types are imported
#: by the generated file's header (``frontend/scripts/protocol.mjs``).
MODEL_TYPES: dict[tuple[str, tuple[str, ...]], str] = {
    ("SnapshotMessage", ("document",)): "LoomDocument",
    ("SnapshotMessage", ("issues",)): "Issue[]",
    ("AppliedMessage", ("issues",)): "Issue[]",
    ("AppliedMessage", ("ops",)): "EditOp[]",
    ("LivePlanCost", ("collectives",)): "Record<string, Collective[]>",
}

#: Inline object schemas that get a name: (definition, path) -> type name.
NAMED: dict[tuple[str, tuple[str, ...]], str] = {
    ("SnapshotMessage", ("present", "items")): "Presence",
}


def message_name(kind: str, side: str) -> str:
    """The type name of the message ``kind`` sent by ``side`` (``client`` or ``server``).

    >>> message_name("presence", "client"), message_name("edit", "client")
    ('ClientPresenceMessage', 'EditMessage')
    """
    both = kind in protocol.CLIENT_MESSAGES and kind in protocol.SERVER_MESSAGES
    prefix = "Client" if both and side == "client" else ""
    return f"{prefix}{kind[0].upper()}{kind[1:]}Message"


def protocol_document() -> dict[str, Any]:
    """One JSON Schema: a definition per message and shared schema, and ``ServerMessage`` /
    ``ClientMessage`` as the union of each side's messages (the root is either)."""
    definitions: dict[str, Any] = {}
    unions: dict[str, list[dict[str, str]]] = {"ServerMessage": [], "ClientMessage": []}
    sides = (("server", protocol.SERVER_MESSAGES), ("client", protocol.CLIENT_MESSAGES))
    for side, messages in sides:
        for kind, schema in messages.items():
            name = message_name(kind, side)
            definitions[name] = {"title": name, **_with_refs(schema, top=None)}
            unions[f"{side.title()}Message"].append(_ref(name))
    for name, schema in SHARED.items():
        definitions[name] = {"title": name, **_with_refs(schema, top=schema)}
    for (name, path), ts_type in MODEL_TYPES.items():
        _at(definitions[name], path).update(tsType=ts_type)
    for (name, path), title in NAMED.items():
        _at(definitions[name], path)["title"] = title
    for name, refs in unions.items():
        definitions[name] = {"title": name, "anyOf": refs}
    return {
        "title": "Message",
        "anyOf": [_ref("ServerMessage"), _ref("ClientMessage")],
        "$defs": definitions,
    }


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _with_refs(schema: Any, top: dict[str, Any] | None) -> Any:
    """A deep copy of ``schema`` where every shared schema (other than ``top``) is a ``$ref``."""
    for name, shared in SHARED.items():
        if schema is shared and schema is not top:
            return _ref(name)
    if isinstance(schema, dict):
        return {key: _with_refs(value, top) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_with_refs(value, top) for value in schema]
    return copy.deepcopy(schema)


def _at(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The sub-schema at ``path`` (property names, and ``items`` for an array's items); a
    ``KeyError`` names the step that does not exist (the protocol changed: update the tables)."""
    for step in path:
        schema = schema["items"] if step == "items" else schema["properties"][step]
    return schema


if __name__ == "__main__":
    json.dump(protocol_document(), sys.stdout, indent=2)
    sys.stdout.write("\n")
