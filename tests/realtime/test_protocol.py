"""The websocket message schemas: what they accept, and the problems they name."""

from __future__ import annotations

from typing import Any

import pytest

from geon.graphs.protocol import CLIENT_MESSAGES, SERVER_MESSAGES, message_errors

RUN = {
    "id": 1,
    "graphId": "g",
    "version": 1,
    "backend": "numpy",
    "status": "running",
    "progress": 0.5,
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
                "present": [{"user": "ann"}],
            },
            [],
        ),
        ("a run event", {"type": "run", "event": "progress", "run": RUN}, []),
        (
            "not an object",
            ["run"],
            ['message type "None" is not known; expected one of "snapshot", "run", "error"'],
        ),
        (
            "unknown type",
            {"type": "edit"},
            ['message type "edit" is not known; expected one of "snapshot", "run", "error"'],
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
            {"type": "snapshot", "document": {"id": "g", "nodes": []}, "issues": [], "present": []},
            ["snapshot at $: 'version' is a required property"],
        ),
    ],
)
def test_server_messages(label: str, message: Any, errors: list[str]) -> None:
    assert message_errors(message, SERVER_MESSAGES) == errors


def test_clients_send_nothing_yet() -> None:
    assert message_errors({"type": "edit"}, CLIENT_MESSAGES) == [
        'message type "edit" is not known; expected one of none yet'
    ]
