"""The websocket protocol of ``/ws/graphs/<id>/`` in one place: a JSON Schema per message type.

Every message is a JSON object with a ``type``. The server sends ``snapshot``, ``run`` and
``error``; clients send nothing yet (``edit`` and ``presence`` join with the collaboration
work, as entries of :data:`CLIENT_MESSAGES`). The tests check every message the server sends
against these schemas; the editor's types (``frontend/src/model/state.ts``) mirror them.

>>> message_errors({"type": "error", "error": {"code": "c", "message": "m"}}, SERVER_MESSAGES)
[]
>>> message_errors({"type": "hello"}, SERVER_MESSAGES)
['message type "hello" is not known; expected one of "snapshot", "run", "error"']
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

_RUN_STATUSES = ["queued", "running", "done", "failed"]
_TIME = {"type": ["string", "null"]}

RUN: dict[str, Any] = {
    "type": "object",
    "required": [
        "id", "graphId", "version", "backend", "status", "progress", "created", "started",
        "finished", "timings", "result", "error", "workerPid",
    ],
    "properties": {
        "id": {"type": "integer"},
        "graphId": {"type": "string"},
        "version": {"type": "integer", "minimum": 1},
        "backend": {"type": "string"},
        "status": {"enum": _RUN_STATUSES},
        "progress": {"type": "number", "minimum": 0, "maximum": 1},
        "created": {"type": "string"},
        "started": _TIME,
        "finished": _TIME,
        "timings": {"type": "object"},
        "result": {"type": "object"},
        "error": {"type": "string"},
        "workerPid": {"type": ["integer", "null"]},
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
            "issues": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["constraint", "type", "severity", "summary", "message", "nodeIds"],
                },
            },
            "present": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["user"],
                    "properties": {"user": {"type": "string"}},
                },
            },
        },
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
        },
    },
}

CLIENT_MESSAGES: dict[str, dict[str, Any]] = {}


def message_errors(message: Any, schemas: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with ``message`` under ``schemas`` (one entry per problem; [] when valid)."""
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in schemas:
        expected = ", ".join(f'"{t}"' for t in schemas) or "none yet"
        return [f'message type "{kind}" is not known; expected one of {expected}']
    validator = Draft202012Validator(schemas[kind])
    return [
        f"{kind} at {error.json_path}: {error.message}"
        for error in sorted(validator.iter_errors(message), key=lambda e: e.json_path)
    ]
