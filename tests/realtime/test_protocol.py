"""The websocket message schemas: what they accept, and the problems they name."""

from __future__ import annotations

from typing import Any

import pytest

from geon.graphs.protocol import CLIENT_MESSAGES, SERVER_MESSAGES, message_errors

UNKNOWN = (
    'message type "{kind}" is not known; expected one of "snapshot", "applied", "rejected", '
    '"presence", "access", "pong", "plans", "run", "review", "notification", "error"'
)
RUN = {
    "id": 1,
    "graphId": "g",
    "version": 1,
    "backend": "numpy",
    "sharded": True,
    "plan": None,
    "seed": 0,
    "uploadedInputs": False,
    "status": "running",
    "progress": 0.5,
    "step": {"operation_id": "op", "kernel": "op:add", "seconds": 0.001},
    "max_abs_diff": None,
    "results": None,
    "created": "2026-01-01T00:00:00+00:00",
    "started": "2026-01-01T00:00:01+00:00",
    "finished": None,
    "timings": {},
    "result": {},
    "error": "",
    "workerPid": 42,
}


@pytest.mark.parametrize(
    ("label", "message", "errors"),
    [
        (
            "a snapshot",
            {
                "type": "snapshot",
                "document": {"id": "g", "nodes": []},
                "version": 1,
                "issues": [],
                "issueCounts": {"error": 0, "warning": 0},
                "present": [
                    {"client": "c1", "user": "ann", "name": "Ann", "selection": [], "cursor": None}
                ],
                "role": "editor",
            },
            [],
        ),
        ("a run event", {"type": "run", "event": "progress", "run": RUN}, []),
        (
            "not an object",
            ["run"],
            [UNKNOWN.format(kind="None")],
        ),
        (
            "unknown type",
            {"type": "edit"},
            [UNKNOWN.format(kind="edit")],
        ),
        (
            "run event with a bad event and progress",
            {"type": "run", "event": "started", "run": {**RUN, "progress": 2}},
            [
                "run at $.event: 'started' is not one of ['queued', 'progress', 'done', 'failed']",
                "run at $.run.progress: 2 is greater than the maximum of 1",
            ],
        ),
        (
            "snapshot without a version",
            {
                "type": "snapshot",
                "document": {"id": "g", "nodes": []},
                "issues": [],
                "issueCounts": {"error": 0, "warning": 0},
                "present": [],
                "role": "viewer",
            },
            ["snapshot at $: 'version' is a required property"],
        ),
        (
            "snapshot with an unknown role",
            {
                "type": "snapshot",
                "document": {"id": "g", "nodes": []},
                "version": 1,
                "issues": [],
                "issueCounts": {"error": 0, "warning": 0},
                "present": [],
                "role": "admin",
            },
            ["snapshot at $.role: 'admin' is not one of ['viewer', 'reviewer', 'editor', 'owner']"],
        ),
    ],
)
def test_server_messages(label: str, message: Any, errors: list[str]) -> None:
    assert message_errors(message, SERVER_MESSAGES) == errors


@pytest.mark.parametrize(
    ("label", "message", "errors"),
    [
        (
            "an edit",
            {
                "type": "edit",
                "id": "e1",
                "baseVersion": 3,
                "ops": [{"op": "remove_node", "id": "n"}],
            },
            [],
        ),
        ("a presence", {"type": "presence", "selection": ["n"], "cursor": {"x": 1, "y": 2.5}}, []),
        ("a ping", {"type": "ping", "id": "p"}, []),
        (
            "an edit without ops",
            {"type": "edit", "id": "e1", "baseVersion": 1, "ops": []},
            ["edit at $.ops: [] should be non-empty"],
        ),
        (
            "an edit with an unknown op and version 0",
            {"type": "edit", "id": "e1", "baseVersion": 0, "ops": [{"op": "explode"}]},
            [
                "edit at $.baseVersion: 0 is less than the minimum of 1",
                "edit at $.ops[0].op: 'explode' is not one of ['add_node', 'remove_node', "
                "'update_node', 'set_layout', 'add_axis', 'set_axis', 'shard']",
            ],
        ),
        (
            "a presence with a stray field",
            {"type": "presence", "colour": "red"},
            ["presence at $: Additional properties are not allowed ('colour' was unexpected)"],
        ),
        (
            "a server message sent by a client",
            {"type": "applied"},
            ['message type "applied" is not known; expected one of "edit", "presence", "ping"'],
        ),
    ],
)
def test_client_messages(label: str, message: Any, errors: list[str]) -> None:
    assert message_errors(message, CLIENT_MESSAGES) == errors
