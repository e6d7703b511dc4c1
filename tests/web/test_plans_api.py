"""Shard plans with an axis mapping and input placements over ``/api/v1/`` (issue 16 item 2):
who may save them, what generating writes, and refusals that change nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from geon import core as gc
from geon.core.graph import APPLICATION, OPERATION, PLACEMENT
from geon.core.plans import INPUT_PLACEMENT
from geon.graphs.models import Graph, Membership, ShardPlan
from geon.graphs.services import do_create_graph

pytestmark = pytest.mark.django_db

API = "/api/v1"
MESH = {"name": "pod", "axes": {"dp": 2, "tp": 3}}
PLAN = {
    "name": "megatron-ish",
    "mesh": MESH,
    "axisMapping": {"F": "tp"},
    "inputs": {"x": {"over": {"N": "dp"}}, "W1": "replicated"},
}


def mlp() -> dict[str, Any]:
    """The issue's 2-layer MLP: x[N, D] -> dot W1[D-1, F] -> relu -> dot W2[F-1, D]."""
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 6)
    x = gc.placeholder(axes=[N, D], name="x")
    w1 = gc.placeholder(axes=[D - 1, F], name="W1")
    w2 = gc.placeholder(axes=[F - 1, D], name="W2")
    h = gc.relu(gc.dot(x, w1, name="hidden"), name="relu")
    return gc.graph([gc.dot(h, w2, name="y")]).to_json()


@pytest.fixture
def graph(user: Any) -> Graph:
    return do_create_graph(owner=user, title="MLP", document=mlp())


@pytest.fixture
def as_user(client: Client, user: Any, other_user: Any, graph: Graph) -> Any:
    """Sign in as ``owner`` (ann), ``viewer``/``editor`` (bob with that role) or ``stranger``."""

    def sign_in(persona: str) -> Client:
        if persona == "owner":
            client.force_login(user)
        else:
            if persona != "stranger":
                Membership.objects.create(graph=graph, user=other_user, role=persona)
            client.force_login(other_user)
        return client

    return sign_in


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(API + path, json.dumps(body), content_type="application/json")


def patch(client: Client, path: str, body: Any) -> Any:
    return client.patch(API + path, json.dumps(body), content_type="application/json")


def document(graph: Graph) -> dict[str, Any]:
    fresh = Graph.objects.select_related("current_version").get(pk=graph.pk)
    assert fresh.current_version is not None
    return fresh.current_version.document


@pytest.mark.parametrize(
    ("persona", "status"), [("owner", 201), ("editor", 201), ("viewer", 403), ("stranger", 404)]
)
def test_saving_a_plan_with_a_mapping_and_inputs_needs_an_editor(
    persona: str, status: int, as_user: Any, graph: Graph
) -> None:
    response = post(as_user(persona), f"/graphs/{graph.pk}/plans", PLAN)
    assert response.status_code == status
    if status != 201:
        assert ShardPlan.objects.count() == 0
        return
    body = response.json()
    assert {k: body[k] for k in ("name", "mesh", "axisMapping", "inputs", "spec")} == {
        **PLAN,
        "spec": {},
    }
    stored = ShardPlan.objects.get()
    assert (stored.axis_mapping, stored.inputs) == (PLAN["axisMapping"], PLAN["inputs"])


def test_generating_a_mapped_plan_writes_it_and_splits_the_contracted_axis_too(
    as_user: Any, graph: Graph
) -> None:
    client = as_user("editor")
    plan = post(client, f"/graphs/{graph.pk}/plans", PLAN).json()
    response = post(client, f"/graphs/{graph.pk}/plans/{plan['id']}/generate", {"baseVersion": 1})
    assert (response.status_code, response.json()["issues"]) == (200, [])
    nodes = document(graph)["nodes"]
    ops = {n["body"]["kernel"]: n["id"] for n in nodes if n["type"] == OPERATION}
    assert sorted(ops) == ["op:dot", "op:dot_partial", "op:relu", "op:sum"]
    apps = [n for n in nodes if n["type"] == APPLICATION]
    # the first dot and relu are split over F on tp; the second dot contracts F, so it becomes
    # partial products split over tp and a sum of them run whole, replicated on every device
    # (issue 16 item 1: the partials are all-reduced)
    placed_apps = {(a["body"]["operationId"], tuple(a["tags"][PLACEMENT]["coords"])) for a in apps}
    assert placed_apps == {
        (ops[kernel], (0, tp))
        for kernel in ("op:dot", "op:relu", "op:dot_partial")
        for tp in range(3)
    }
    not_split: list[dict[str, Any]] = []
    assert response.json()["notSplit"] == not_split
    assert ShardPlan.objects.get().applications["notSplit"] == not_split
    # and where the inputs live is in the document
    mesh = response.json()["plan"]["applications"]["mesh"]
    placed = {n["label"]: n.get("tags", {}).get(INPUT_PLACEMENT) for n in nodes if "label" in n}
    assert (placed["x"], placed["W1"], placed["W2"]) == (
        {"mesh": mesh, "placement": {"over": {"N": "dp"}}},
        {"mesh": mesh, "placement": "replicated"},
        None,
    )


def test_a_patch_changes_the_mapping_and_keeps_the_rest(as_user: Any, graph: Graph) -> None:
    client = as_user("owner")
    plan = post(client, f"/graphs/{graph.pk}/plans", PLAN).json()
    changed = patch(client, f"/graphs/{graph.pk}/plans/{plan['id']}", {"axisMapping": {"N": "dp"}})
    assert changed.status_code == 200
    body = changed.json()
    assert (body["axisMapping"], body["inputs"], body["mesh"]) == (
        {"N": "dp"},
        PLAN["inputs"],
        MESH,
    )


def test_changing_how_a_generated_plan_places_the_graph_forgets_what_it_wrote(
    as_user: Any, graph: Graph
) -> None:
    # given a plan the document was generated on
    client = as_user("owner")
    plan = post(client, f"/graphs/{graph.pk}/plans", PLAN).json()
    path = f"/graphs/{graph.pk}/plans/{plan['id']}"
    assert post(client, f"{path}/generate", {"baseVersion": 1}).status_code == 200
    written = ShardPlan.objects.get().applications
    assert written["operations"]
    # a new name keeps what it wrote (the document is still on it)
    assert patch(client, path, {"name": "renamed"}).status_code == 200
    assert ShardPlan.objects.get().applications == written
    # a new mapping forgets it: the document is on the plan again only once it is generated
    assert patch(client, path, {"axisMapping": {"N": "dp"}}).status_code == 200
    assert ShardPlan.objects.get().applications == {}


@pytest.mark.parametrize(
    ("label", "change", "status", "error"),
    [
        (
            "mapping to a mesh axis the mesh lacks",
            {"axisMapping": {"N": "pp"}},
            422,
            {
                "code": "invalid_document",
                "message": 'axis mapping "N" -> "pp" names mesh axis "pp", which mesh "pod" does '
                'not have; expected one of ("dp", "tp")',
            },
        ),
        (
            "mapping an axis the document lacks",
            {"axisMapping": {"Q": "dp"}},
            422,
            {
                "code": "invalid_edit",
                "message": 'plan "megatron-ish": axis mapping "Q" -> "dp": no tensor or operation '
                'of the document has axis "Q"; expected one of ("D", "F", "N")',
            },
        ),
        (
            "placing an input that is not one",
            {"inputs": {"y": "replicated"}},
            422,
            {
                "code": "invalid_edit",
                "message": 'plan "megatron-ish": input "y" is no tensor of the document; expected '
                'the label or id of a graph input: one of ("x", "W1", "W2")',
            },
        ),
    ],
)
def test_a_bad_mapping_or_placement_is_refused_and_changes_nothing(
    label: str,
    change: dict[str, Any],
    status: int,
    error: dict[str, str],
    as_user: Any,
    graph: Graph,
) -> None:
    client = as_user("editor")
    made = post(client, f"/graphs/{graph.pk}/plans", PLAN).json()
    created = post(client, f"/graphs/{graph.pk}/plans", {**PLAN, "name": "other", **change})
    changed = patch(client, f"/graphs/{graph.pk}/plans/{made['id']}", change)
    for response in (created, changed):
        expected = error["message"].replace(
            "megatron-ish", "other" if response is created else "megatron-ish"
        )
        assert (response.status_code, response.json()["error"]) == (
            status,
            {**error, "message": expected},
        )
    stored = ShardPlan.objects.get()
    assert (stored.axis_mapping, stored.inputs) == (PLAN["axisMapping"], PLAN["inputs"])


def chain(ops: int) -> dict[str, Any]:
    """``ops`` additions in a chain, each of two (N, D) tensors: ``t0 + t1 -> t2``, ..."""
    N, D = gc.Axis("N", 16), gc.Axis("D", 4)
    t = gc.placeholder(axes=[N, D], name="t0")
    for n in range(1, ops + 1):
        t = gc.add(t, gc.placeholder(axes=[N, D], name=f"w{n}"), name=f"t{n}")
    return gc.graph([t]).to_json()


def test_a_plan_past_the_edit_bound_is_generated_and_its_own_bound_named(
    client: Client, user: Any, settings: Any
) -> None:
    # given 150 additions split 8 ways by rows: 1,350 node ops, past what one edit may carry
    stored = do_create_graph(owner=user, title="chain", document=chain(150))
    client.force_login(user)
    rows = {"name": "rows", "mesh": {"name": "m", "axes": {"d": 8}}, "axisMapping": {"N": "d"}}
    plan = post(client, f"/graphs/{stored.pk}/plans", rows).json()
    generate = f"/graphs/{stored.pk}/plans/{plan['id']}/generate"
    assert settings.GEON_MAX_OPS_PER_EDIT < 1350
    # when its generation is bounded lower than that, it is refused by name, and nothing changes
    default = settings.GEON_MAX_PLAN_OPS
    settings.GEON_MAX_PLAN_OPS = 1000
    refused = post(client, generate, {"baseVersion": 1})
    assert refused.status_code == 413, refused.content
    message = refused.json()["error"]["message"]
    assert message.startswith('plan "rows" writes more than GEON_MAX_PLAN_OPS (1,000) node ops')
    assert [n for n in document(stored)["nodes"] if n["type"] == APPLICATION] == []
    # then under the default bound it is written: 8 Applications per addition
    settings.GEON_MAX_PLAN_OPS = default
    done = post(client, generate, {"baseVersion": 1})
    assert done.status_code == 200, done.content
    apps = [n for n in document(stored)["nodes"] if n["type"] == APPLICATION]
    assert len(apps) == 150 * 8
