"""Chaos for the editor's line to the server (issue 14.4): the web server is killed with
SIGKILL in the middle of a burst of edits and started again on the same port and database.
The editor says the connection is lost and that its unsaved edits are kept, takes one more edit
while the server is down, reconnects, resynchronises from the snapshot, sends again what the
server never acknowledged (with the same edit ids), and ends with the stored document; every
edit is stored once. An edit whose ``applied`` the drop lost is sent again with its id and the
server answers it as a repeat: it is stored once, and the editor neither folds it twice nor
moves its version back. A graph deleted while it is open ends the session with the reason, and
the editor does not try again.

A signed-out user is offered a sign-in link, a viewer's edits are refused in the editor, and an
issue list the server cut short (``issueCounts``) is counted whole.

The web server is this module's own (not the shared ``daphne_server``), so that it can be
killed and started again, or run with other limits.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, WebSocketRoute

from geon.cli.serve import daphne_command
from tests.browser.helpers import Browsers, off_loop, open_graph, screenshots, sign_in
from tests.processes import free_port, stop_process

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
#: Bound on a server start and on each wait for the editor (ms for Playwright).
START_SECONDS = 60.0
WAIT_MS = 60_000
#: Edits in the burst: pairs of (add a tensor, rename it), so each second edit builds on the first.
PAIRS = 12


class RestartableServer:
    """A Daphne serving geon on a fixed port of the test database, killed and started at will."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.env = env
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start it and wait (bounded) until it accepts connections."""
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                daphne_command("127.0.0.1", self.port),
                env=self.env,
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_SECONDS
        while not self._listening():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"daphne did not start; its log:\n{self.log.read_text()}")
            time.sleep(0.1)

    def _listening(self) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def freeze(self) -> None:
        """SIGSTOP: it reads nothing more and answers nothing (frames sent to it are lost)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def kill(self) -> None:
        """SIGKILL: no goodbye to any client, nothing flushed."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=30)
        self.process = None

    def stop(self) -> None:
        """End it (SIGTERM, then SIGKILL after a bounded wait)."""
        if self.process is not None:
            stop_process(self.process)


#: The issues a server of ``few_issues_server`` sends with ``applied`` and ``snapshot``.
FEW_ISSUES = 3


@pytest.fixture
def few_issues_server(
    subprocess_env: dict[str, str], tmp_path: Path
) -> Iterator[RestartableServer]:
    """A web server that sends at most ``FEW_ISSUES`` issues per message (with the counts)."""
    env = {**subprocess_env, "GEON_WS_MAX_ISSUES": str(FEW_ISSUES)}
    running = RestartableServer(env, tmp_path / "daphne.log")
    running.start()
    yield running
    running.stop()


@pytest.fixture
def server(subprocess_env: dict[str, str], tmp_path: Path) -> Iterator[RestartableServer]:
    """This module's own web server, started once; the test may kill and start it again."""
    running = RestartableServer(subprocess_env, tmp_path / "daphne.log")
    running.start()
    yield running
    running.stop()


def stored(graph_id: str) -> tuple[int, dict[str, Any]]:
    """The graph's current version number and document, read from the database."""
    from geon.graphs.models import Graph

    def read() -> tuple[int, dict[str, Any]]:
        version = Graph.objects.select_related("current_version").get(pk=graph_id).current_version
        assert version is not None
        return version.number, version.document

    return off_loop(read)


def versions(graph_id: str) -> list[tuple[int, str | None, str | None]]:
    """Every version after the first: its number, author's username and edit id."""
    from geon.graphs.models import GraphVersion

    def read() -> list[tuple[int, str | None, str | None]]:
        rows = GraphVersion.objects.filter(graph_id=graph_id, number__gt=1).order_by("number")
        return list(rows.values_list("number", "author__username", "edit_id"))

    return off_loop(read)


#: An edit id of the editor: a random UUID of the page load, then a count.
EDIT_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-[0-9]+")


def by_id(document: dict[str, Any]) -> dict[str, Any]:
    """A document's nodes by id (the comparison ignores their order)."""
    return {node["id"]: node for node in document["nodes"]}


def tensor(node_id: str, label: str) -> dict[str, Any]:
    """A positional float32 tensor of 4 elements."""
    from geon.core.graph import TENSOR

    return {
        "id": node_id,
        "type": TENSOR,
        "label": label,
        "body": {"dtype": "float32", "range": {"start": [0], "end": [4]}},
    }


def edit(tab: Page, name: str, ops: list[dict[str, Any]]) -> None:
    """One user action through the test API; the editor must not refuse it."""
    refused = tab.evaluate("([name, ops]) => window.geon.edit(name, ops)", [name, ops])
    assert refused is None, refused


def burst(tab: Page, ids: list[str], first: int) -> None:
    """Add a tensor per id and rename it, each as its own edit, all at once (the rename builds
    on the add); the tensors are numbered from ``first``."""
    tensors = [tensor(node_id, f"burst {first + i}") for i, node_id in enumerate(ids)]
    tab.evaluate(
        """([ids, tensors, first]) => ids.forEach((id, i) => {
             window.geon.edit(`add ${first + i}`, [{op: "add_node", node: tensors[i]}]);
             const rename = {op: "update_node", id, label: `renamed ${first + i}`};
             window.geon.edit(`rename ${first + i}`, [rename]);
           })""",
        [ids, tensors, first],
    )


# Kept for the PostgreSQL + Redis pass: clients of a killed server reconnect to its services.
@pytest.mark.story_on_services
def test_a_killed_server_loses_no_edit(
    server: RestartableServer, user: Any, password: str, graph: Any, browsers: Browsers
) -> None:
    tab = browsers.new_page()
    shot = screenshots(tab, "reconnect")
    graph_id = str(graph.pk)
    sign_in(tab, server.url, "ann", password)
    open_graph(tab, server.url, graph_id)
    ids = [f"00000000-0000-4000-8000-{i:012d}" for i in range(2 * PAIRS + 1)]
    # when ann makes a burst of edits and the server acknowledges the first half
    burst(tab, ids[:PAIRS], 0)
    acknowledged = 1 + 2 * PAIRS
    tab.wait_for_function(
        "(v) => { const s = window.geon.state(); return s.version === v && s.unsaved === 0 }",
        arg=acknowledged,
        timeout=WAIT_MS,
    )
    # and the server freezes while the second half goes out, and is then killed (SIGKILL)
    server.freeze()
    burst(tab, ids[PAIRS : 2 * PAIRS], PAIRS)
    server.kill()
    # then the editor says the connection is lost, and keeps every unacknowledged edit
    status = tab.locator(".geon-connection")
    status.filter(has_text="connection lost — reconnecting").wait_for(timeout=WAIT_MS)
    assert status.get_attribute("data-state") in ("closed", "connecting")
    tab.locator(".geon-connection .geon-retry").wait_for(timeout=WAIT_MS)
    state = tab.evaluate("window.geon.state()")
    assert (state["version"], state["unsaved"]) == (acknowledged, 2 * PAIRS)
    # when ann makes one more edit while the server is down
    edit(tab, "add offline", [{"op": "add_node", "node": tensor(ids[-1], "offline")}])
    tab.wait_for_function(
        "(n) => document.querySelector('.geon-connection').textContent"
        "  .includes(`your ${n} unsaved edits are kept`)",
        arg=2 * PAIRS + 1,
        timeout=WAIT_MS,
    )
    shot("01-connection-lost")
    number, _ = stored(graph_id)
    assert number == acknowledged
    # when the server is started again on the same port and database
    server.start()
    # then the editor reconnects, resyncs and sends what the server never acknowledged, once
    tab.wait_for_function(
        "() => { const s = window.geon.state(); return s.connection === 'open' && !s.unsaved }",
        timeout=WAIT_MS,
    )
    shot("02-reconnected")
    state = tab.evaluate("window.geon.state()")
    number, document = stored(graph_id)
    # one version per edit: nothing acknowledged was sent twice, nothing was dropped
    assert number == acknowledged + 2 * PAIRS + 1
    assert state["version"] == number
    nodes = by_id(document)
    assert [nodes[node_id]["label"] for node_id in ids[:-1]] == [
        f"renamed {i}" for i in range(2 * PAIRS)
    ]
    assert nodes[ids[-1]]["label"] == "offline"
    # and the editor's document is the stored one
    assert by_id(state["document"]) == nodes
    # each of them under its own id, of one page load
    ids_stored = [edit_id for _, _, edit_id in versions(graph_id)]
    assert len(set(ids_stored)) == len(ids_stored) == 4 * PAIRS + 1
    assert all(EDIT_ID.fullmatch(edit_id or "") for edit_id in ids_stored), ids_stored
    assert len({(edit_id or "").rsplit("-", 1)[0] for edit_id in ids_stored}) == 1
    # every edit is still ann's to undo, the last one first
    assert len(state["history"]["undo"]) == 4 * PAIRS + 1
    assert state["history"]["undo"][-1] == "add offline"
    assert tab.text_content(".geon-connection-text") == "live"
    assert (
        tab.text_content(".geon-toast") == f"reconnected: {2 * PAIRS + 1} unsaved edits sent again"
    )


@pytest.fixture
def bob_edits(graph: Any, other_user: Any) -> None:
    """bob is an editor of ann's graph."""
    from geon.graphs.models import Membership

    Membership.objects.create(graph=graph, user=other_user, role="editor")


def test_an_edit_whose_applied_was_lost_is_answered_as_a_repeat(
    server: RestartableServer,
    user: Any,
    other_user: Any,
    password: str,
    graph: Any,
    bob_edits: None,
    loom_document: dict[str, Any],
    browsers: Browsers,
) -> None:
    from geon.graphs.services import do_apply_edit

    tab = browsers.new_page()
    graph_id = str(graph.pk)
    sign_in(tab, server.url, "ann", password)
    # the line passes through the test (the machine's edge): it records the frames of each
    # connection, and can lose an applied as it drops
    lines: list[dict[str, list[dict[str, Any]]]] = []
    lose_next_applied = {"armed": False}
    bobs_node = loom_document["nodes"][0]["id"]
    relabel = [{"op": "update_node", "id": bobs_node, "label": "bob's"}]

    def line(ws: WebSocketRoute) -> None:
        upstream = ws.connect_to_server()
        frames: dict[str, list[dict[str, Any]]] = {"sent": [], "received": [], "lost": []}
        lines.append(frames)

        def from_page(message: str | bytes) -> None:
            frames["sent"].append(json.loads(message))
            upstream.send(message)

        def from_server(message: str | bytes) -> None:
            frame = json.loads(message)
            if lose_next_applied["armed"] and frame.get("type") == "applied":
                lose_next_applied["armed"] = False
                frames["lost"].append(frame)
                upstream.close(code=1001)
                ws.close(code=1001)
                # and while ann is away, bob relabels another node (version 3)
                off_loop(lambda: do_apply_edit(other_user, graph.pk, 2, relabel))
                return
            frames["received"].append(frame)
            ws.send(message)

        ws.on_message(from_page)
        upstream.on_message(from_server)

    tab.route_web_socket(re.compile(r"/ws/graphs/"), line)
    open_graph(tab, server.url, graph_id)
    # when ann adds a tensor and renames it, and the add's applied is lost as the line drops
    node_id = "00000000-0000-4000-8000-0000000000cc"
    add = {"op": "add_node", "node": tensor(node_id, "t")}
    rename = {"op": "update_node", "id": node_id, "label": "t renamed"}
    lose_next_applied["armed"] = True
    edit(tab, "add t", [add])
    edit(tab, "rename t", [rename])
    # then the editor reconnects and sends both again, the add with the same id
    tab.wait_for_function(
        "() => { const s = window.geon.state(); return s.connection === 'open' && !s.unsaved }",
        timeout=WAIT_MS,
    )
    assert len(lines) == 2
    first, second = lines
    [add_sent] = [f for f in first["sent"] if f["type"] == "edit"]
    assert (add_sent["ops"], add_sent["baseVersion"]) == ([add], 1)
    assert EDIT_ID.fullmatch(add_sent["id"]), add_sent["id"]
    assert [(f["id"], f["version"]) for f in first["lost"]] == [(add_sent["id"], 2)]
    add_again, rename_sent = [f for f in second["sent"] if f["type"] == "edit"]
    assert add_again == add_sent
    # the rename builds on the add, version 2, which was ann's: bob's version 3 is checked
    assert (rename_sent["ops"], rename_sent["baseVersion"]) == ([rename], 2)
    # the server answered the add as a repeat (its version, to ann alone), then the rename
    [snapshot] = [f for f in second["received"] if f["type"] == "snapshot"]
    assert snapshot["version"] == 3
    answers = [(f["id"], f["version"]) for f in second["received"] if f["type"] == "applied"]
    assert answers == [(add_sent["id"], 2), (rename_sent["id"], 4)]
    # and each edit is stored once
    assert versions(graph_id) == [
        (2, "ann", add_sent["id"]),
        (3, "bob", None),
        (4, "ann", rename_sent["id"]),
    ]
    number, document = stored(graph_id)
    state = tab.evaluate("window.geon.state()")
    # the editor's document is the stored one, at its version (the repeat moved nothing back)
    assert (state["version"], by_id(state["document"])) == (number, by_id(document))
    assert (by_id(document)[node_id]["label"], by_id(document)[bobs_node]["label"]) == (
        "t renamed",
        "bob's",
    )
    assert state["history"]["undo"] == ["add t", "rename t"]
    assert tab.text_content(".geon-toast") == "reconnected: 2 unsaved edits sent again"


def refused_after(tab: Page, attempts: int) -> dict[str, Any]:
    """Wait until the server ends the session; then check that the editor scheduled no further
    try (no countdown: the socket answered the close with no backoff), and return its state.
    That no timer fires later is the socket's unit test's (frontend/src/sync/socket.test.ts,
    "stops when the server refuses the session": ten minutes on, still one attempt)."""
    tab.wait_for_function("() => window.geon.state().link.refused !== null", timeout=WAIT_MS)
    state: dict[str, Any] = tab.evaluate("window.geon.state()")
    assert (state["link"]["attempts"], state["link"]["retryAt"]) == (attempts, None)
    assert state["connection"] == "closed"
    return state


def api(tab: Page, method: str, path: str, body: dict[str, Any] | None = None) -> int:
    """A REST call from the page (its session and CSRF token); the answer's status."""
    status: int = tab.evaluate(
        """async ([method, path, body]) => {
             const csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;
             const headers = {"X-CSRFToken": csrf, "Content-Type": "application/json"};
             const init = {method, headers, body: body === null ? undefined : JSON.stringify(body)};
             return (await fetch(path, init)).status;
           }""",
        [method, path, body],
    )
    return status


def test_a_deleted_graph_ends_the_session_and_stops_reconnecting(
    server: RestartableServer, user: Any, password: str, graph: Any, browsers: Browsers
) -> None:
    tab = browsers.new_page()
    shot = screenshots(tab, "reconnect")
    graph_id = str(graph.pk)
    sign_in(tab, server.url, "ann", password)
    open_graph(tab, server.url, graph_id)
    attempts = tab.evaluate("window.geon.state().link.attempts")
    # when ann deletes the graph while it is open (as from another tab)
    assert api(tab, "DELETE", f"/api/v1/graphs/{graph_id}") == 204
    # then the server ends the session (4404), the editor says why and does not try again
    state = refused_after(tab, attempts)
    assert state["link"]["refused"]["code"] == 4404
    status = tab.locator(".geon-connection")
    assert status.get_attribute("data-state") == "refused"
    text = status.text_content() or ""
    assert "you no longer have a role on graph" in text, text
    assert "the editor stopped reconnecting (close code 4404)" in text
    assert tab.locator(".geon-retry, .geon-sign-in").count() == 0
    shot("03-deleted")


def test_signed_out_ends_the_session_with_a_sign_in_link(
    server: RestartableServer, user: Any, password: str, graph: Any, browsers: Browsers
) -> None:
    tab = browsers.new_page()
    graph_id = str(graph.pk)
    sign_in(tab, server.url, "ann", password)
    open_graph(tab, server.url, graph_id)
    # when ann's session ends (signed out elsewhere) and the line then drops and comes back
    tab.context.clear_cookies()
    server.kill()
    tab.locator(".geon-connection").filter(has_text="connection lost").wait_for(timeout=WAIT_MS)
    server.start()
    # then the server refuses the new line (4401): the editor says so and offers to sign in
    tab.wait_for_function("() => window.geon.state().link.refused !== null", timeout=WAIT_MS)
    attempts = tab.evaluate("window.geon.state().link.attempts")
    state = refused_after(tab, attempts)
    assert state["link"]["refused"]["code"] == 4401
    assert "you are signed out" in (tab.text_content(".geon-connection") or "")
    screenshots(tab, "reconnect")("04-signed-out")
    # and the link signs her in and brings her back to the graph, live
    tab.click(".geon-connection .geon-sign-in")
    tab.fill("#id_username", "ann")
    tab.fill("#id_password", password)
    tab.click("button[type=submit]")
    tab.wait_for_url(f"{server.url}/graphs/{graph_id}/", timeout=WAIT_MS)
    tab.wait_for_function("() => window.geon.state().connection === 'open'", timeout=WAIT_MS)


def test_a_viewer_is_refused_locally_and_a_removed_member_is_told(
    server: RestartableServer,
    user: Any,
    password: str,
    graph: Any,
    bob_edits: None,
    browsers: Browsers,
) -> None:
    graph_id = str(graph.pk)
    ann, bob = browsers.new_page(), browsers.new_page()
    sign_in(ann, server.url, "ann", password)
    open_graph(ann, server.url, graph_id)
    sign_in(bob, server.url, "bob", password)
    open_graph(bob, server.url, graph_id)
    # when ann makes bob a viewer
    assert api(ann, "PUT", f"/api/v1/graphs/{graph_id}/members/bob", {"role": "viewer"}) == 202
    bob.wait_for_function("() => window.geon.state().role === 'viewer'", timeout=WAIT_MS)
    # then bob's edits are refused in his editor, with the reason, and nothing is sent
    refused = bob.evaluate(
        "(node) => window.geon.edit('add', [{op: 'add_node', node}])",
        tensor("00000000-0000-4000-8000-0000000000bb", "bob's"),
    )
    assert refused == (
        "you are a viewer on this graph, so edits are refused; an owner can make you an editor"
    )
    assert bob.text_content(".geon-toast") == refused
    assert bob.evaluate("window.geon.state().unsaved") == 0
    assert stored(graph_id)[0] == 1
    # when ann removes bob from the graph
    attempts = bob.evaluate("window.geon.state().link.attempts")
    assert api(ann, "DELETE", f"/api/v1/graphs/{graph_id}/members/bob") == 204
    # then bob's editor says why the session ended and does not try again
    state = refused_after(bob, attempts)
    assert state["link"]["refused"]["code"] == 4404
    assert "you no longer have a role on graph" in (bob.text_content(".geon-connection") or "")


@pytest.fixture
def broken_graph(user: Any, loom_document: dict[str, Any]) -> Any:
    """ann's loom graph plus five tensors of an unknown dtype: five errors."""
    from geon.core.graph import TENSOR
    from geon.graphs.services import do_create_graph

    document = dict(loom_document)
    document["nodes"] = [
        *loom_document["nodes"],
        *(
            {
                "id": f"00000000-0000-4000-8000-00000000010{i}",
                "type": TENSOR,
                "label": f"bad {i}",
                "body": {"dtype": "nope", "range": {"start": [0], "end": [2]}},
            }
            for i in range(5)
        ),
    ]
    return do_create_graph(owner=user, title="Broken", document=document)


def test_a_cut_issue_list_shows_every_issue_counted(
    few_issues_server: RestartableServer, user: Any, password: str, broken_graph: Any,
    browsers: Browsers,
) -> None:  # fmt: skip
    tab = browsers.new_page()
    sign_in(tab, few_issues_server.url, "ann", password)
    tab.goto(f"{few_issues_server.url}/graphs/{broken_graph.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.state().version === 1")
    # then the server sent 3 of the 5 issues, and the editor counts all 5
    state = tab.evaluate("window.geon.state()")
    assert (len(state["issues"]), state["issueCounts"]) == (FEW_ISSUES, {"error": 5, "warning": 0})
    issues = tab.locator(".geon-issues")
    assert (issues.text_content(), issues.get_attribute("title")) == (
        "5 issues",
        "5 errors, 0 warnings",
    )
    panel = tab.locator(".geon-issues-panel")
    assert panel.locator("h2").text_content() == "Issues (5)"
    assert panel.locator(".geon-issues-more").text_content() == "showing 3 of 5 issues"
    assert panel.locator(".geon-issue").count() == FEW_ISSUES
