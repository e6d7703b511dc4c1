"""The websocket protocol of ``/ws/graphs/<id>/`` in one place: a JSON Schema per message type.

Every message is a JSON object with a ``type``.

Client -> server (:data:`CLIENT_MESSAGES`):

- ``edit`` ``{id, baseVersion, ops}``: ``id`` is the client's name for the edit (echoed back),
  ``ops`` are the edit ops of :mod:`geon.graphs.edits` (``add_node``, ``remove_node``,
  ``update_node``, ``set_layout``, ``add_axis``, ``set_axis``, ``shard``).
- ``presence`` ``{selection?, cursor?}``: what this client has selected (node ids) and where its
  pointer is (canvas coordinates, or null).
- ``ping`` ``{id?}``: answered by ``pong`` ``{id}`` (a liveness check and a latency baseline).

Server -> client (:data:`SERVER_MESSAGES`):

- ``snapshot`` ``{document, version, issues, present}`` on connect (and again when the document
  is replaced through the REST API); ``present`` lists every client connected to the graph
  (this one included) as ``{client, user, name, selection, cursor}``.
- ``applied`` ``{id, version, ops, issues, author}`` to every client when an edit is stored:
  ``ops`` are node ops only (higher-level ops arrive expanded), ``issues`` is every issue of the
  new version, ``id`` is the sender's edit id (null for edits made through the REST API).
- ``rejected`` ``{id, reason, message, version}`` to the sender only; nothing changed.
  ``reason``: ``invalid_edit``, ``conflict`` (with ``conflicts: [{id, field}]``), ``forbidden``,
  ``unknown_version``, ``too_many_ops``, ``rate_limited``.
- ``presence`` ``{event: join|leave|update, client, user, name, selection, cursor}`` to the
  other clients.
- ``run`` ``{event: queued|progress|done|failed, run}``.
- ``plans`` ``{author}`` to every client when the graph's shard plans were saved, changed,
  generated or deleted (through the REST API): the editor reloads its list.
- ``pong`` ``{id}``.
- ``error`` ``{error: {code, message}, id?}`` for a frame that is not a valid message
  (``invalid_message``, ``unknown_message_type``, ``message_too_large``); the connection stays
  open.

The tests check every message the server sends against these schemas; the editor's types
(``frontend/src/model/state.ts``) mirror them.

>>> message_errors({"type": "error", "error": {"code": "c", "message": "m"}}, SERVER_MESSAGES)
[]
>>> message_errors({"type": "hello"}, CLIENT_MESSAGES)
['message type "hello" is not known; expected one of "edit", "presence", "ping"']
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

_RUN_STATUSES = ["queued", "running", "done", "failed"]
_TIME = {"type": ["string", "null"]}

RUN: dict[str, Any] = {
    "type": "object",
    "required": [
        "id", "graphId", "version", "backend", "sharded", "plan", "seed", "uploadedInputs",
        "status", "progress", "step", "created", "started", "finished", "timings", "result",
        "max_abs_diff", "results", "error", "workerPid",
    ],
    "properties": {
        "id": {"type": "integer"},
        "graphId": {"type": "string"},
        "version": {"type": "integer", "minimum": 1},
        "backend": {"type": "string"},
        "sharded": {"type": "boolean"},
        "plan": {"type": ["integer", "null"]},
        "seed": {"type": ["integer", "null"]},
        "uploadedInputs": {"type": "boolean"},
        "status": {"enum": _RUN_STATUSES},
        "progress": {"type": "number", "minimum": 0, "maximum": 1},
        "step": {"type": ["object", "null"]},
        "max_abs_diff": {"type": ["object", "null"], "additionalProperties": {"type": "number"}},
        "results": {"type": ["string", "null"]},
        "created": {"type": "string"},
        "started": _TIME,
        "finished": _TIME,
        "timings": {"type": "object"},
        "result": {"type": "object"},
        "error": {"type": "string"},
        "workerPid": {"type": ["integer", "null"]},
    },
}  # fmt: skip

EDIT_ID: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 100}
ISSUES: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["constraint", "type", "severity", "summary", "message", "nodeIds"],
    },
}
SELECTION: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "maxItems": 10_000}
CURSOR: dict[str, Any] = {
    "type": ["object", "null"],
    "required": ["x", "y"],
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "additionalProperties": False,
}
CLIENT: dict[str, Any] = {
    "client": {"type": "string"},
    "user": {"type": "string"},
    "name": {"type": "string"},
    "selection": SELECTION,
    "cursor": CURSOR,
}
NODE_OP: dict[str, Any] = {
    "type": "object",
    "required": ["op"],
    "properties": {
        "op": {
            "enum": [
                "add_node", "remove_node", "update_node", "set_layout", "add_axis", "set_axis",
                "shard",
            ]
        }
    },
}  # fmt: skip

SERVER_MESSAGES: dict[str, dict[str, Any]] = {
    "snapshot": {
        "type": "object",
        "required": ["type", "document", "version", "issues", "present"],
        "properties": {
            "type": {"const": "snapshot"},
            "document": {
                "type": "object",
                "required": ["id", "nodes"],
                "properties": {"id": {"type": "string"}, "nodes": {"type": "array"}},
            },
            "version": {"type": "integer", "minimum": 1},
            "issues": ISSUES,
            "present": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": list(CLIENT),
                    "properties": CLIENT,
                },
            },
        },
    },
    "applied": {
        "type": "object",
        "required": ["type", "id", "version", "ops", "issues", "author"],
        "properties": {
            "type": {"const": "applied"},
            "id": {"type": ["string", "null"]},
            "version": {"type": "integer", "minimum": 2},
            "ops": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["op"],
                    "properties": {"op": {"enum": ["add_node", "remove_node", "update_node"]}},
                },
            },
            "issues": ISSUES,
            "author": {"type": "string"},
        },
    },
    "rejected": {
        "type": "object",
        "required": ["type", "id", "reason", "message", "version"],
        "properties": {
            "type": {"const": "rejected"},
            "id": {"type": "string"},
            "reason": {
                "enum": [
                    "invalid_edit",
                    "conflict",
                    "forbidden",
                    "unknown_version",
                    "too_many_ops",
                    "rate_limited",
                ]
            },
            "message": {"type": "string"},
            "version": {"type": "integer", "minimum": 1},
            "conflicts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "field"],
                    "properties": {"id": {"type": "string"}, "field": {"type": "string"}},
                },
            },
        },
    },
    "presence": {
        "type": "object",
        "required": ["type", "event", *CLIENT],
        "properties": {
            "type": {"const": "presence"},
            "event": {"enum": ["join", "leave", "update"]},
            **CLIENT,
        },
    },
    "pong": {
        "type": "object",
        "required": ["type", "id"],
        "properties": {"type": {"const": "pong"}, "id": {"type": ["string", "null"]}},
    },
    "plans": {
        "type": "object",
        "required": ["type", "author"],
        "properties": {"type": {"const": "plans"}, "author": {"type": "string"}},
    },
    "run": {
        "type": "object",
        "required": ["type", "event", "run"],
        "properties": {
            "type": {"const": "run"},
            "event": {"enum": ["queued", "progress", "done", "failed"]},
            "run": RUN,
        },
    },
    "error": {
        "type": "object",
        "required": ["type", "error"],
        "properties": {
            "type": {"const": "error"},
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            },
            "id": {"type": "string"},
        },
    },
}

CLIENT_MESSAGES: dict[str, dict[str, Any]] = {
    "edit": {
        "type": "object",
        "required": ["type", "id", "baseVersion", "ops"],
        "additionalProperties": False,
        "properties": {
            "type": {"const": "edit"},
            "id": EDIT_ID,
            "baseVersion": {"type": "integer", "minimum": 1},
            "ops": {"type": "array", "minItems": 1, "items": NODE_OP},
            "message": {"type": "string", "maxLength": 500},
        },
    },
    "presence": {
        "type": "object",
        "required": ["type"],
        "additionalProperties": False,
        "properties": {"type": {"const": "presence"}, "selection": SELECTION, "cursor": CURSOR},
    },
    "ping": {
        "type": "object",
        "required": ["type"],
        "additionalProperties": False,
        "properties": {"type": {"const": "ping"}, "id": EDIT_ID},
    },
}


_VALIDATORS: dict[int, Draft202012Validator] = {}


def message_errors(message: Any, schemas: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with ``message`` under ``schemas`` (one entry per problem; [] when valid)."""
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in schemas:
        expected = ", ".join(f'"{t}"' for t in schemas) or "none yet"
        return [f'message type "{kind}" is not known; expected one of {expected}']
    validator = _VALIDATORS.get(id(schemas[kind]))
    if validator is None:
        validator = _VALIDATORS[id(schemas[kind])] = Draft202012Validator(schemas[kind])
    return [
        f"{kind} at {error.json_path}: {error.message}"
        for error in sorted(validator.iter_errors(message), key=lambda e: e.json_path)
    ]
