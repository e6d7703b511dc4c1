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

- ``snapshot`` ``{document, version, issues, issueCounts, present, role}`` on connect (and again
  when the document is replaced through the REST API); ``present`` lists every client connected
  to the graph (this one included) as ``{client, user, name, selection, cursor}``; ``role`` is
  this user's role on the graph (``viewer``, ``reviewer``, ``editor`` or ``owner``).
- ``applied`` ``{id, version, ops, issues, issueCounts, author}`` to every client when an edit
  is stored: ``ops`` are node ops only (higher-level ops arrive expanded), ``id`` is the
  sender's edit id (null for edits made through the REST API without one). An ``edit`` whose
  ``id`` its sender already used on the graph (say, sent again after a reconnect) is not
  applied again: the sender alone gets ``applied`` with the version that edit made and its
  stored ops (the issues are the document's now); nothing is stored or sent to others.
  An ``applied`` with more node ops than one edit may carry (``GEON_MAX_OPS_PER_EDIT``: a large
  generated plan) says ``undoable: false``: its inverse would be refused as an edit, so the
  editor does not offer to undo it.
  The last ``applied`` of a commit also carries ``planCost`` when the document holds a stored
  plan's Applications (at most ``GEON_LIVE_COST_MAX_APPLICATIONS``): ``{planId, plan, version,
  collectives: {profile: [collective]}}`` for every shipped profile (a pipelined plan's with its
  sends, and ``pipeline: {profile: {schedule, stages, microbatches, bubble, stageSeconds, ...}}``),
  or ``{planId, plan, version, error}`` when the plan no longer fits; the editor labels its
  edges from it at once (:mod:`geon.graphs.services.plan_trials`).
- In both, ``issues`` holds at most ``GEON_WS_MAX_ISSUES`` (200) issues of the version, errors
  first, each severity in the checker's order, and ``issueCounts`` ``{error, warning}`` counts
  every issue of the version (the REST ``GET /api/v1/graphs/<id>`` has the whole list).
- ``rejected`` ``{id, reason, message, version}`` to the sender only; nothing changed.
  ``reason``: ``invalid_edit``, ``conflict`` (with ``conflicts: [{id, field}]``), ``forbidden``,
  ``unknown_version``, ``too_many_ops``, ``rate_limited``, ``unavailable`` (the database could
  not be reached or was locked: send the edit again later).
- ``access`` ``{role}`` when the client's role on the graph changed and it still has one (the
  next edit is checked against the new role). When the role is gone (removed, the graph
  deleted) the server sends ``error`` with code ``access_removed`` and closes with 4404.
- ``presence`` ``{event: join|leave|update, client, user, name, selection, cursor}`` to the
  other clients; a client's rapid updates are merged (the latest, at most every 50 ms).
- ``run`` ``{event: queued|progress|done|failed, run}``.
- ``plans`` ``{author}`` to every client when the graph's shard plans were saved, changed,
  generated or deleted (through the REST API): the editor reloads its list.
- ``notification`` ``{notification, unread}`` to every websocket of the person it concerns, on
  whichever graph (docs/reviews.md, Notifications; ``unread`` counts their unread ones);
- ``review`` ``{event: opened|thread|comment|resolved|verdict|state|applied|requested,
  review}`` to every client when a review of the graph changed (``review`` is its summary,
  docs/reviews.md; the reviews app publishes it through the feeds of
  :mod:`geon.graphs.services.feeds`).
- ``pong`` ``{id}``.
- ``error`` ``{code, message, error: {code, message}, id?}`` (the code and message twice: at
  the top, and in ``error`` as before) for a frame that is not a valid message
  (``invalid_message``: not JSON, nested deeper than :data:`MAX_DEPTH`, a number that is not
  finite, or not matching its schema; ``unknown_message_type``; ``message_too_large``), for
  ``presence`` over the rate (``rate_limited``), and ``access_removed`` before a 4404 close.
  Except for ``access_removed`` the connection stays open.

Close codes (after the handshake is accepted, so a browser sees them): 4401 not signed in, 4404
no such graph or no role on it (at connect, or once the role is taken away).

Every integer fits int64 (:mod:`geon.core.limits`); a selection has at most
:data:`SELECTION_MAX` node ids of at most 64 characters; a cursor's coordinates lie within
+-1e9.

The tests check every message the server sends against these schemas; the editor's types are
generated from them (``make protocol`` writes ``frontend/src/sync/protocol.ts`` through
:mod:`geon.graphs.protocol_schema`, and ``make test`` fails when that file is not current).

>>> error = {"code": "c", "message": "m"}
>>> message_errors({"type": "error", **error, "error": error}, SERVER_MESSAGES)
[]
>>> message_errors({"type": "hello"}, CLIENT_MESSAGES)
['message type "hello" is not known; expected one of "edit", "presence", "ping"']
"""

from __future__ import annotations

import json
import sys
from typing import Any

from jsonschema import Draft202012Validator

from geon.core.errors import GeonError
from geon.core.limits import INT64_MAX, INT64_MIN

#: The deepest nesting of arrays and objects a client message may have.
MAX_DEPTH = 64
#: The most node ids a ``presence`` selection may name.
SELECTION_MAX = 1000

#: A review's summary in a ``review`` event (docs/reviews.md; the REST API's review without
#: its threads): the fields the editor reads to refresh what it shows.
REVIEW: dict[str, Any] = {
    "type": "object",
    "required": ["id", "title", "state", "activity", "openThreads", "verdicts"],
    "properties": {
        "id": {"type": "integer"},
        "title": {"type": "string"},
        "state": {"enum": ["open", "approved", "changes_requested", "closed"]},
        "activity": {"type": "integer"},
        "openThreads": {"type": "integer"},
        "verdicts": {"type": "array", "items": {"type": "object"}},
    },
}
#: A person's notification (docs/reviews.md, Notifications; the REST inbox's item).
NOTIFICATION: dict[str, Any] = {
    "type": "object",
    "required": ["id", "kind", "graph", "review", "text", "url", "read", "created"],
    "properties": {
        "id": {"type": "integer"},
        "kind": {"enum": ["review_requested", "mentioned", "replied", "verdict", "stale"]},
        "graph": {"type": "string"},
        "review": {"type": "integer"},
        "thread": {"type": "integer"},
        "text": {"type": "string"},
        "url": {"type": "string"},
        "read": {"type": "boolean"},
        "created": {"type": "string"},
    },
}
_RUN_STATUSES = ["queued", "running", "done", "failed"]
_TIME = {"type": ["string", "null"]}
_ROLES = ["viewer", "reviewer", "editor", "owner"]
INT: dict[str, Any] = {"type": "integer", "minimum": INT64_MIN, "maximum": INT64_MAX}
VERSION: dict[str, Any] = {**INT, "minimum": 1}
OPTIONAL_INT: dict[str, Any] = {**INT, "type": ["integer", "null"]}
COORDINATE: dict[str, Any] = {"type": "number", "minimum": -1e9, "maximum": 1e9}

RUN: dict[str, Any] = {
    "type": "object",
    "required": [
        "id", "graphId", "version", "backend", "sharded", "plan", "seed", "uploadedInputs",
        "status", "progress", "step", "created", "started", "finished", "timings", "result",
        "max_abs_diff", "results", "error", "workerPid",
    ],
    "properties": {
        "id": INT,
        "graphId": {"type": "string"},
        "version": VERSION,
        "backend": {"type": "string"},
        "engine": {"enum": ["numpy", "jax"]},
        "sharded": {"type": "boolean"},
        "plan": OPTIONAL_INT,
        "planName": {"type": ["string", "null"]},
        "intermediates": {"type": "boolean"},
        "seed": OPTIONAL_INT,
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
        "workerPid": OPTIONAL_INT,
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
ISSUE_COUNTS: dict[str, Any] = {
    "type": "object",
    "required": ["error", "warning"],
    "additionalProperties": False,
    "properties": {"error": {**INT, "minimum": 0}, "warning": {**INT, "minimum": 0}},
}
SELECTION: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 64},
    "maxItems": SELECTION_MAX,
}
CURSOR: dict[str, Any] = {
    "type": ["object", "null"],
    "required": ["x", "y"],
    "properties": {"x": COORDINATE, "y": COORDINATE},
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

#: One collective of a plan's cost (:mod:`geon.core.plans.cost.collectives`, with the names of
#: :func:`geon.core.plans.diff.named_collective`); a pipelined plan's ``send`` also carries its
#: ``microbatch``, its ``stages`` (from, to) and its ``pass``
#: (:mod:`geon.core.plans.cost.pipelined`).
COLLECTIVE: dict[str, Any] = {
    "type": "object",
    "required": [
        "kind", "tensor", "producer", "consumer", "tensorLabel", "producerLabel",
        "consumerLabel", "meshAxes", "devices", "bytes", "seconds",
    ],
    "properties": {
        "kind": {
            "enum": ["all-gather", "reduce-scatter", "all-reduce", "all-to-all", "permute", "send"]
        },
        "meshAxes": {"type": "array", "items": {"type": "string"}},
        "devices": {**INT, "minimum": 1},
        "groups": {**INT, "minimum": 1},
        "bytes": {**INT, "minimum": 0},
        "bytesPerDevice": {**INT, "minimum": 0},
        "seconds": {"type": "number", "minimum": 0},
        "microbatch": {**INT, "minimum": 0},
        "stages": {"type": "array", "items": {**INT, "minimum": 0}, "minItems": 2, "maxItems": 2},
        "pass": {"enum": ["forward", "backward"]},
    },
}  # fmt: skip
#: A pipelined plan's step under one profile: the cost's ``pipeline`` less its ``grid``
#: (:mod:`geon.core.plans.cost.pipelined`; issue 33).
PIPELINE: dict[str, Any] = {
    "type": "object",
    "required": ["schedule", "stages", "microbatches", "bubble", "stageSeconds"],
    "properties": {
        "axis": {"type": "string"},
        "schedule": {"enum": ["gpipe", "1f1b", "interleaved"]},
        "stages": {**INT, "minimum": 1},
        "devices": {**INT, "minimum": 1},
        "virtualStages": {**INT, "minimum": 1},
        "microbatches": {**INT, "minimum": 1},
        "bubble": {"type": "number", "minimum": 0},
        "bubbleOverBusy": {"type": "number", "minimum": 0},
        "stageSeconds": {"type": "array", "items": {"type": "number"}},
        "forwardSeconds": {"type": "array", "items": {"type": "number"}},
        "backwardSeconds": {"type": "array", "items": {"type": "number"}},
        "sendSeconds": {"type": "array", "items": {"type": "number"}},
        "inFlight": {"type": "array", "items": {"type": "number"}},
        "seconds": {"type": "number", "minimum": 0},
    },
}
#: What an ``applied`` carries of the document's current plan
#: (:func:`geon.graphs.services.plan_trials.live_plan_cost`).
PLAN_COST: dict[str, Any] = {
    "type": "object",
    "required": ["planId", "plan", "version"],
    "additionalProperties": False,
    "properties": {
        "planId": {**INT, "minimum": 1},
        "plan": {"type": "string"},
        "version": VERSION,
        "collectives": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": COLLECTIVE},
        },
        "pipeline": {"type": "object", "additionalProperties": PIPELINE},
        "error": {"type": "string"},
    },
}

SERVER_MESSAGES: dict[str, dict[str, Any]] = {
    "snapshot": {
        "type": "object",
        "required": ["type", "document", "version", "issues", "issueCounts", "present", "role"],
        "properties": {
            "type": {"const": "snapshot"},
            "document": {
                "type": "object",
                "required": ["id", "nodes"],
                "properties": {"id": {"type": "string"}, "nodes": {"type": "array"}},
            },
            "version": VERSION,
            "issues": ISSUES,
            "issueCounts": ISSUE_COUNTS,
            "present": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": list(CLIENT),
                    "properties": CLIENT,
                },
            },
            "role": {"enum": _ROLES},
        },
    },
    "applied": {
        "type": "object",
        "required": ["type", "id", "version", "ops", "issues", "issueCounts", "author"],
        "properties": {
            "type": {"const": "applied"},
            "id": {"type": ["string", "null"]},
            "version": {**INT, "minimum": 2},
            "ops": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["op"],
                    "properties": {"op": {"enum": ["add_node", "remove_node", "update_node"]}},
                },
            },
            "issues": ISSUES,
            "issueCounts": ISSUE_COUNTS,
            "author": {"type": "string"},
            "planCost": PLAN_COST,
            "undoable": {"const": False},
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
                    "unavailable",
                ]
            },
            "message": {"type": "string"},
            "version": VERSION,
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
    "access": {
        "type": "object",
        "required": ["type", "role"],
        "properties": {"type": {"const": "access"}, "role": {"enum": _ROLES}},
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
    "review": {
        "type": "object",
        "required": ["type", "event", "review"],
        "properties": {
            "type": {"const": "review"},
            "event": {
                "enum": [
                    "opened",
                    "thread",
                    "comment",
                    "resolved",
                    "verdict",
                    "state",
                    "applied",
                    "requested",
                ]
            },
            "review": REVIEW,
        },
    },
    "notification": {
        "type": "object",
        "required": ["type", "notification", "unread"],
        "properties": {
            "type": {"const": "notification"},
            "notification": NOTIFICATION,
            "unread": {"type": "integer", "minimum": 0},
        },
    },
    "error": {
        "type": "object",
        "required": ["type", "code", "message", "error"],
        "properties": {
            "type": {"const": "error"},
            "code": {"type": "string"},
            "message": {"type": "string"},
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
            "baseVersion": VERSION,
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


#: The most problems :func:`message_errors` names, and the characters of each (the rest is
#: elided): an answer to a bad frame stays small whatever the frame holds.
MAX_PROBLEMS = 10
MAX_PROBLEM_CHARS = 300


def message_errors(message: Any, schemas: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with ``message`` under ``schemas`` (one entry per problem; [] when valid):
    at most :data:`MAX_PROBLEMS` entries (then one that counts the rest), each of at most
    about :data:`MAX_PROBLEM_CHARS` characters (a long value is shown by its ends).

    >>> [len(p) for p in message_errors({"type": "ping", "id": "x" * 1000}, CLIENT_MESSAGES)]
    [300]
    """
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in schemas:
        expected = ", ".join(f'"{t}"' for t in schemas) or "none yet"
        return [f'message type "{kind}" is not known; expected one of {expected}']
    validator = _VALIDATORS.get(id(schemas[kind]))
    if validator is None:
        validator = _VALIDATORS[id(schemas[kind])] = Draft202012Validator(schemas[kind])
    found = sorted(validator.iter_errors(message), key=lambda e: e.json_path)
    problems = [_shorten(f"{kind} at {e.json_path}: {e.message}") for e in found[:MAX_PROBLEMS]]
    if len(found) > MAX_PROBLEMS:
        problems.append(f"and {len(found) - MAX_PROBLEMS} more problems")
    return problems


def _shorten(text: str) -> str:
    """``text``, or its first and last characters around "..." when it is too long."""
    if len(text) <= MAX_PROBLEM_CHARS:
        return text
    tail = MAX_PROBLEM_CHARS // 3
    return text[: MAX_PROBLEM_CHARS - tail - 3] + "..." + text[-tail:]


class InvalidMessage(GeonError):
    """A client frame that is not a JSON value the protocol can take."""


def parse_message(frame: str | bytes, subject: str = "the message") -> Any:
    """The JSON value of a client frame; :class:`InvalidMessage` when it is not JSON, holds a
    number that is not finite (``NaN``, ``Infinity``) or an integer of more than 4300 digits,
    or nests arrays and objects deeper than :data:`MAX_DEPTH` (so no later recursive step on
    it can run out of stack). ``subject`` names it in the refusal (REST says "the request
    body").

    >>> parse_message('{"type": "ping"}')
    {'type': 'ping'}
    >>> try:
    ...     parse_message("[" * 100_000)
    ... except InvalidMessage as error:
    ...     print(str(error)[:33])
    the message is nested too deeply;
    """
    too_deep = (
        f"{subject} is nested too deeply; at most {MAX_DEPTH} levels of arrays and objects are "
        "allowed"
    )

    def not_finite(constant: str) -> Any:
        raise InvalidMessage(f'{subject} holds "{constant}"; expected finite numbers only')

    try:
        value = json.loads(frame, parse_constant=not_finite)
    except RecursionError:
        raise InvalidMessage(too_deep) from None
    except json.JSONDecodeError as error:
        raise InvalidMessage(f"{subject} is not JSON ({error}); expected an object") from None
    except UnicodeDecodeError:
        raise InvalidMessage(f"{subject} is not UTF-8 text; expected a JSON object") from None
    except ValueError:  # an integer with more digits than Python converts
        raise InvalidMessage(
            f"{subject} holds an integer of more than {sys.get_int_max_str_digits()} "
            f"digits; expected integers of at most {INT64_MAX}"
        ) from None
    if depth_over(value, MAX_DEPTH):
        raise InvalidMessage(too_deep)
    return value


def depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` deep (iterative: a deep
    value cannot exhaust the stack).

    >>> depth_over([[1]], 2), depth_over([[[1]]], 2)
    (False, True)
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in item if isinstance(child, (list, dict)))
    return False
