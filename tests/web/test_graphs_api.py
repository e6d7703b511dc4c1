"""The graphs half of ``/api/v1/``: each endpoint with three personas (the owner, a member, a
stranger), asserting the answer and what is stored, and that a refused request changes nothing."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.db import DatabaseError
from django.test import Client, override_settings

from geon.accounts.models import ApiToken
from geon.core.graph import PLACEMENT
from geon.graphs import services
from geon.graphs.models import Graph, GraphVersion, Membership, ShardPlan
from geon.graphs.services import document_issues
from geon.graphs.services.copies import ABOUT_TAG

pytestmark = pytest.mark.django_db

T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
API = "/api/v1"


def not_found(graph_id: Any) -> dict[str, Any]:
    return {
        "error": {
            "code": "not_found",
            "message": f'graph "{graph_id}" does not exist or you do not have access to it',
        }
    }


def forbidden(graph: Any, role: str, needed: str) -> dict[str, Any]:
    return {
        "error": {
            "code": "forbidden",
            "message": f'your role on graph "{graph.title}" is "{role}"; this needs {needed}',
        }
    }


UNAUTHENTICATED = {
    "error": {
        "code": "not_authenticated",
        "message": "sign in, or send an API token as 'Authorization: Bearer <token>'",
    }
}


def state(graph: Any) -> tuple[Any, ...]:
    """What a refused request must leave as it was."""
    fresh = Graph.objects.select_related("current_version").get(pk=graph.pk)
    assert fresh.current_version is not None
    return (
        fresh.title,
        fresh.current_version.number,
        fresh.current_version.document,
        GraphVersion.objects.filter(graph=fresh).count(),
        sorted(Membership.objects.filter(graph=fresh).values_list("user__username", "role")),
    )


@pytest.fixture
def as_user(client: Client, user: Any, other_user: Any, graph: Any) -> Any:
    """Sign in as a persona: ``owner`` (ann), ``viewer``/``editor`` (bob with that role),
    ``stranger`` (bob without a role) or ``anonymous``."""

    def sign_in(persona: str) -> Client:
        if persona == "owner":
            client.force_login(user)
        elif persona in ("viewer", "reviewer", "editor"):
            Membership.objects.create(graph=graph, user=other_user, role=persona)
            client.force_login(other_user)
        elif persona == "owner member":
            Membership.objects.create(graph=graph, user=other_user, role="owner")
            client.force_login(other_user)
        elif persona == "stranger":
            client.force_login(other_user)
        return client

    return sign_in


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(API + path, json.dumps(body), content_type="application/json")


def patch(client: Client, path: str, body: Any) -> Any:
    return client.patch(API + path, json.dumps(body), content_type="application/json")


# --- create, read -----------------------------------------------------------------------------


def test_creating_a_graph_answers_its_id_title_version(
    client: Client, user: Any, loom_document: dict[str, Any]
) -> None:
    client.force_login(user)
    response = post(client, "/graphs", {"title": " Mine ", "document": loom_document})
    created = Graph.objects.get(title="Mine")
    assert response.status_code == 201
    body = response.json()
    assert {k: body[k] for k in ("id", "title", "version", "role", "owner", "team")} == {
        "id": str(created.pk),
        "title": "Mine",
        "version": 1,
        "role": "owner",
        "owner": "ann",
        "team": None,
    }
    assert body["document"] == loom_document
    assert body["issues"] == document_issues(loom_document)
    assert created.owner == user
    assert created.current_version is not None
    assert created.current_version.document == loom_document


@pytest.mark.parametrize(
    ("label", "persona", "body", "status", "error"),
    [
        ("anonymous", "anonymous", "good", 401, UNAUTHENTICATED["error"]),
        (
            "document without nodes",
            "owner",
            {"title": "x", "document": {"id": "g"}},
            422,
            {
                "code": "invalid_document",
                "message": 'document has no "nodes"; expected a list of nodes',
            },
        ),
        (
            "blank title",
            "owner",
            "blank",
            422,
            {
                "code": "invalid_document",
                "message": 'title " " is not valid; expected a non-empty string of at most 200 '
                "characters",
            },
        ),
        (
            "no document",
            "owner",
            {"title": "x"},
            422,
            {"code": "invalid_request", "message": "body.payload.document: Field required"},
        ),
    ],
)
def test_a_refused_create_stores_nothing(
    label: str,
    persona: str,
    body: Any,
    status: int,
    error: dict[str, Any],
    as_user: Any,
    loom_document: dict[str, Any],
) -> None:
    client = as_user(persona)
    if body == "good":
        body = {"title": "x", "document": loom_document}
    elif body == "blank":
        body = {"title": " ", "document": loom_document}
    before = Graph.objects.count()
    response = post(client, "/graphs", body)
    assert (response.status_code, response.json()) == (status, {"error": error})
    assert Graph.objects.count() == before


@pytest.mark.parametrize(
    ("persona", "status", "role"),
    [("owner", 200, "owner"), ("viewer", 200, "viewer"), ("stranger", 404, None)],
)
def test_reading_a_graph(
    persona: str, status: int, role: str | None, as_user: Any, graph: Any, loom_document: Any
) -> None:
    response = as_user(persona).get(f"{API}/graphs/{graph.pk}")
    assert response.status_code == status
    if status == 404:
        assert response.json() == not_found(graph.pk)
        return
    body = response.json()
    assert (body["id"], body["title"], body["version"], body["role"]) == (
        str(graph.pk),
        "Loom add",
        1,
        role,
    )
    assert (body["document"], body["issues"]) == (loom_document, [])


def test_the_list_holds_the_graphs_you_have_a_role_on(as_user: Any, graph: Any) -> None:
    assert as_user("stranger").get(f"{API}/graphs").json() == {"graphs": []}
    listed = as_user("viewer").get(f"{API}/graphs").json()["graphs"]
    assert [(g["id"], g["role"]) for g in listed] == [(str(graph.pk), "viewer")]


def test_anonymous_visitors_get_401_everywhere(client: Client, graph: Any) -> None:
    for path in ("/graphs", f"/graphs/{graph.pk}", f"/graphs/{graph.pk}/versions"):
        response = client.get(API + path)
        assert (response.status_code, response.json()) == (401, UNAUTHENTICATED)


# --- writes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "base", "status"),
    [
        ("owner", 1, 200),
        ("editor", 1, 200),
        ("viewer", 1, 403),
        ("stranger", 1, 404),
        ("owner", 5, 409),
    ],
)
def test_replacing_the_document_needs_an_editor_and_the_current_version(
    persona: str, base: int, status: int, as_user: Any, graph: Any, loom_document: Any
) -> None:
    client = as_user(persona)
    changed = copy.deepcopy(loom_document)
    changed["nodes"][0]["label"] = "renamed"
    before = state(graph)
    response = patch(
        client, f"/graphs/{graph.pk}", {"baseVersion": base, "title": "New", "document": changed}
    )
    assert response.status_code == status
    if status == 200:
        body = response.json()
        assert (body["title"], body["version"], body["document"]) == ("New", 2, changed)
        after = state(graph)
        assert after[:4] == ("New", 2, changed, 2)
        version = GraphVersion.objects.get(graph=graph, number=2)
        assert version.touched == {changed["nodes"][0]["id"]: ["label"]}
        return
    expected = {
        403: forbidden(graph, "viewer", '"editor" or "owner"'),
        404: not_found(graph.pk),
        409: {
            "error": {
                "code": "stale_version",
                "message": 'base version "5" is not the current version 1; reload it and '
                "apply your change again",
                "version": 1,
            }
        },
    }[status]
    assert response.json() == expected
    assert state(graph) == before


def test_an_invalid_document_replacement_changes_nothing(as_user: Any, graph: Any) -> None:
    client = as_user("owner")
    before = state(graph)
    response = patch(client, f"/graphs/{graph.pk}", {"baseVersion": 1, "document": {"id": 3}})
    assert (response.status_code, response.json()) == (
        422,
        {
            "error": {
                "code": "invalid_document",
                "message": 'document has id "3"; expected a string (a UUID)',
            }
        },
    )
    assert state(graph) == before


@pytest.mark.parametrize(
    ("persona", "status"),
    [("owner", 204), ("owner member", 403), ("editor", 403), ("stranger", 404)],
)
def test_only_the_owner_deletes(persona: str, status: int, as_user: Any, graph: Any) -> None:
    response = as_user(persona).delete(f"{API}/graphs/{graph.pk}")
    assert response.status_code == status
    assert Graph.objects.filter(pk=graph.pk).exists() == (status != 204)
    if status == 403:
        role = persona.split()[0]
        assert response.json() == {
            "error": {
                "code": "forbidden",
                "message": f'only the owner of graph "{graph.title}" ("ann") may delete it; your '
                f'role is "{role}"',
            }
        }


@pytest.mark.parametrize(
    ("persona", "base", "status"),
    [("editor", 1, 200), ("viewer", 1, 403), ("stranger", 1, 404)],
)
def test_edit_ops_over_http(persona: str, base: int, status: int, as_user: Any, graph: Any) -> None:
    client = as_user(persona)
    before = state(graph)
    ops = [{"op": "update_node", "id": T0, "label": "a"}]
    response = post(client, f"/graphs/{graph.pk}/edits", {"baseVersion": base, "ops": ops})
    assert response.status_code == status
    if status == 200:
        assert response.json() == {
            "version": 2,
            "ops": ops,
            "issues": [],
            "issueCounts": {"error": 0, "warning": 0},
            "author": "bob",
        }
        assert state(graph)[1] == 2
    else:
        assert state(graph) == before


def test_a_conflicting_http_edit_answers_409(as_user: Any, graph: Any, user: Any) -> None:
    services.do_apply_edit(user, graph.pk, 1, [{"op": "update_node", "id": T0, "label": "a"}])
    client = as_user("owner")
    before = state(graph)
    ops = [{"op": "update_node", "id": T0, "label": "b"}]
    response = post(client, f"/graphs/{graph.pk}/edits", {"baseVersion": 1, "ops": ops})
    assert (response.status_code, response.json()) == (
        409,
        {
            "error": {
                "code": "conflict",
                "message": f'node "{T0}" field "label" changed after version 1; reload version 2 '
                "and edit again",
                "version": 2,
                "conflicts": [{"id": T0, "field": "label"}],
            }
        },
    )
    assert state(graph) == before


# --- versions, diff, export/import ------------------------------------------------------------


def test_versions_and_their_diff(
    as_user: Any, graph: Any, user: Any, loom_document: Any, django_user_model: Any
) -> None:
    services.do_apply_edit(
        user,
        graph.pk,
        1,
        [
            {"op": "update_node", "id": T0, "label": "a", "body": {"dtype": "int64"}},
            {"op": "remove_node", "id": "2524fb44-d169-4afd-90fa-09711462e4b3"},
        ],
        message="relabel",
    )
    client = as_user("viewer")
    listed = client.get(f"{API}/graphs/{graph.pk}/versions").json()["versions"]
    assert [(v["number"], v["author"], v["message"]) for v in listed] == [
        (2, "ann", "relabel"),
        (1, "ann", ""),
    ]
    first = client.get(f"{API}/graphs/{graph.pk}/versions/1").json()
    assert (first["number"], first["document"]) == (1, loom_document)
    diff = client.get(f"{API}/graphs/{graph.pk}/versions/1/diff/2").json()
    assert diff == {
        "base": 1,
        "target": 2,
        "added": [],
        "removed": ["2524fb44-d169-4afd-90fa-09711462e4b3"],
        "changed": [{"id": T0, "fields": ["label", "body.dtype"]}],
    }
    missing = client.get(f"{API}/graphs/{graph.pk}/versions/9")
    assert (missing.status_code, missing.json()["error"]["message"]) == (
        404,
        f'version "9" of graph "{graph.title}" does not exist; expected 1 to 2',
    )
    eve = Client()
    eve.force_login(django_user_model.objects.create_user("eve"))
    stranger = eve.get(f"{API}/graphs/{graph.pk}/versions/1/diff/2")
    assert (stranger.status_code, stranger.json()) == (404, not_found(graph.pk))


def test_export_then_import_round_trips_the_document(
    as_user: Any, graph: Any, loom_document: Any
) -> None:
    client = as_user("viewer")
    exported = client.get(f"{API}/graphs/{graph.pk}/export")
    assert exported.status_code == 200
    assert exported["Content-Disposition"] == 'attachment; filename="loom-add.json"'
    # the same document, keys in their order too (PostgreSQL's jsonb would reorder them), with
    # the title and description after them (tests/web/test_graph_description.py)
    about = {"tags": {ABOUT_TAG: {"title": "Loom add", "description": ""}}}
    assert json.dumps(exported.json()) == json.dumps({**loom_document, **about})
    imported = client.post(
        f"{API}/graphs/import?title=Copy", exported.content, content_type="application/json"
    )
    assert imported.status_code == 201
    copy_of = Graph.objects.get(pk=imported.json()["id"])
    assert (copy_of.title, copy_of.owner.username) == ("Copy", "bob")
    assert copy_of.current_version is not None
    assert json.dumps(copy_of.current_version.document) == json.dumps(loom_document)


# --- members ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "status"),
    [("owner", 202), ("owner member", 202), ("editor", 403), ("stranger", 404)],
)
def test_only_the_owner_manages_members(
    persona: str, status: int, as_user: Any, graph: Any, django_user_model: Any
) -> None:
    django_user_model.objects.create_user("cy")
    client = as_user(persona)
    before = state(graph)
    response = client.put(
        f"{API}/graphs/{graph.pk}/members/cy",
        json.dumps({"role": "reviewer"}),
        content_type="application/json",
    )
    assert response.status_code == status
    if status == 202:
        assert response.json() == {"user": "cy", "role": "reviewer", "status": "invited"}
        members = client.get(f"{API}/graphs/{graph.pk}/members").json()["members"]
        assert {"user": "cy", "role": "reviewer"} in members
        removed = client.delete(f"{API}/graphs/{graph.pk}/members/cy")
        assert removed.status_code == 204
        assert not Membership.objects.filter(graph=graph, user__username="cy").exists()
    else:
        assert state(graph) == before


@pytest.mark.parametrize(
    ("label", "username", "role", "message"),
    [
        (
            "unknown role",
            "bob",
            "admin",
            'role "admin" is not known; expected one of "viewer", "reviewer", "editor", "owner"',
        ),
        (
            "the owner",
            "ann",
            "viewer",
            'user "ann" owns the graph; the owner needs no membership (the owner can hand the '
            "graph over with POST /api/v1/graphs/<id>/owner)",
        ),
    ],
)
def test_bad_member_requests_are_refused(
    label: str, username: str, role: str, message: str, as_user: Any, graph: Any, other_user: Any
) -> None:
    client = as_user("owner")
    before = state(graph)
    response = client.put(
        f"{API}/graphs/{graph.pk}/members/{username}",
        json.dumps({"role": role}),
        content_type="application/json",
    )
    assert (response.status_code, response.json()["error"]["message"]) == (422, message)
    assert state(graph) == before


# --- validate, tokens, limits -----------------------------------------------------------------


@pytest.mark.parametrize("wrapped", [False, True])
def test_validate_checks_without_storing(
    wrapped: bool, client: Client, loom_document: dict[str, Any]
) -> None:
    loom_document["nodes"][0]["body"]["dtype"] = "int33"
    body = {"document": loom_document} if wrapped else loom_document
    before = GraphVersion.objects.count()
    response = post(client, "/validate", body)
    assert response.status_code == 200
    assert [i["constraint"] for i in response.json()["issues"]] == ["TensorDTypesAreValid"]
    assert GraphVersion.objects.count() == before


def test_validate_names_what_is_wrong_with_any_json(client: Client) -> None:
    response = post(client, "/validate", [1, 2])
    assert response.status_code == 200
    assert [(i["summary"], i["message"]) for i in response.json()["issues"]] == [
        (
            "Document is malformed",
            'document is "[1, 2]"; expected a JSON object with "id" and "nodes"',
        )
    ]


def test_validate_answers_a_body_that_is_not_json_with_400(client: Client) -> None:
    response = client.post(f"{API}/validate", "{", content_type="application/json")
    assert (response.status_code, response.json()) == (
        400,
        {
            "error": {
                "code": "invalid_json",
                "message": "the request body is not JSON (Expecting property name enclosed in "
                "double quotes: line 1 column 2 (char 1)); expected an object",
            }
        },
    )


def test_a_token_authenticates_scripts(client: Client, user: Any, graph: Any) -> None:
    client.force_login(user)
    made = post(client, "/tokens", {"name": "ci"})
    key = made.json()["token"]
    assert made.status_code == 201
    assert ApiToken.objects.get(user=user).name == "ci"
    script = Client()
    ok = script.get(f"{API}/graphs/{graph.pk}", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert (ok.status_code, ok.json()["id"]) == (200, str(graph.pk))
    wrong = script.get(f"{API}/graphs/{graph.pk}", HTTP_AUTHORIZATION="Bearer geon_nope")
    assert (wrong.status_code, wrong.json()) == (401, UNAUTHENTICATED)


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=2048)
def test_a_body_over_the_limit_answers_413(
    client: Client, user: Any, loom_document: dict[str, Any]
) -> None:
    client.force_login(user)
    response = post(client, "/graphs", {"title": "big", "document": loom_document})
    assert (response.status_code, response.json()) == (
        413,
        {"error": {"code": "too_large", "message": "the request body is larger than 2048 bytes"}},
    )
    assert Graph.objects.filter(title="big").count() == 0


def test_an_unexpected_failure_answers_500_without_a_traceback(
    client: Client, user: Any, graph: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(graph: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(services, "live_document", broken)
    client.force_login(user)
    response = client.get(f"{API}/graphs/{graph.pk}")
    assert (response.status_code, response.json()) == (
        500,
        {
            "error": {
                "code": "internal_error",
                "message": "the server failed unexpectedly; the log has the details",
            }
        },
    )


def test_the_openapi_document_and_the_docs_are_served(client: Client) -> None:
    schema = client.get(f"{API}/openapi.json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in (
        "/api/v1/graphs",
        "/api/v1/graphs/{graph_id}",
        "/api/v1/graphs/{graph_id}/versions/{base}/diff/{target}",
        "/api/v1/validate",
        # people (issue 17): members, invitations, links, hand-over, teams, tokens
        "/api/v1/graphs/{graph_id}/members/{username}",
        "/api/v1/graphs/{graph_id}/invitations",
        "/api/v1/graphs/{graph_id}/links",
        "/api/v1/graphs/{graph_id}/owner",
        "/api/v1/graphs/{graph_id}/team",
        "/api/v1/sharing/graphs",
        "/api/v1/teams",
        "/api/v1/teams/{name}/members/{username}",
        "/api/v1/tokens",
        # lessons (issue 19), including what visitors without an account may call
        "/api/v1/lessons/{key}/steps/{step}/try",
        "/api/v1/puzzles/{key}/tries",
        "/api/v1/graphs/{graph_id}/lesson",
    ):
        assert path in paths, path
    assert client.get(f"{API}/docs").status_code == 200


# --- shard plans ------------------------------------------------------------------------------

OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
PLAN = {"name": "two", "mesh": {"name": "m", "axes": {"x": 2}}, "spec": {OP: {"over": {"1": "x"}}}}


@pytest.mark.parametrize(
    ("persona", "status"), [("editor", 201), ("viewer", 403), ("stranger", 404)]
)
def test_creating_a_plan_needs_an_editor(
    persona: str, status: int, as_user: Any, graph: Any
) -> None:
    response = post(as_user(persona), f"/graphs/{graph.pk}/plans", PLAN)
    assert response.status_code == status
    assert ShardPlan.objects.filter(graph=graph).count() == (1 if status == 201 else 0)
    if status == 201:
        body = response.json()
        assert {k: body[k] for k in ("name", "mesh", "spec", "applications")} == {
            **PLAN,
            "applications": {},
        }


def test_generating_a_plan_writes_its_applications_as_a_new_version(
    as_user: Any, graph: Any
) -> None:
    client = as_user("editor")
    plan = post(client, f"/graphs/{graph.pk}/plans", PLAN).json()
    cost = client.get(f"{API}/graphs/{graph.pk}/plans/{plan['id']}/cost")
    # the cost of two int32 shards of [0:10, 0:5] split over x along dim 1: 10x3 and 10x2
    assert cost.status_code == 200
    assert [(d["coords"], d["inputs"], d["outputs"]) for d in cost.json()["devices"]] == [
        ([0], 2 * 10 * 3 * 4, 10 * 3 * 4),
        ([1], 2 * 10 * 2 * 4, 10 * 2 * 4),
    ]
    assert (cost.json()["transfers"], cost.json()["transferBytes"]) == ([], 0)
    assert state(graph)[1] == 1  # costing stores nothing
    # when the editor generates it
    response = post(client, f"/graphs/{graph.pk}/plans/{plan['id']}/generate", {"baseVersion": 1})
    # then version 2 has the Mesh and two placed Applications, and the plan records them
    assert response.status_code == 200
    body = response.json()
    assert (body["version"], body["issues"]) == (2, [])
    document = state(graph)[2]
    apps = [n for n in document["nodes"] if n["type"].endswith("/Application")]
    placements = [a["tags"][PLACEMENT]["coords"] for a in apps]
    assert placements == [[0], [1]]
    recorded = ShardPlan.objects.get(pk=plan["id"]).applications
    assert recorded["version"] == 2
    assert recorded["operations"] == {OP: [a["id"] for a in apps]}
    # generating again on a stale version is refused and changes nothing
    before = state(graph)
    stale = post(client, f"/graphs/{graph.pk}/plans/{plan['id']}/generate", {"baseVersion": 1})
    assert (stale.status_code, stale.json()["error"]["code"]) == (409, "conflict")
    assert state(graph) == before


@pytest.mark.parametrize(
    ("label", "body", "message"),
    [
        (
            "mesh without axes",
            {**PLAN, "mesh": {"name": "m", "axes": {}}},
            "mesh \"{'name': 'm', 'axes': {}}\" is not valid; expected {\"name\": \"...\", "
            '"axes": {"x": 2}} with at least one axis',
        ),
        (
            "zero-sized mesh axis",
            {**PLAN, "mesh": {"name": "m", "axes": {"x": 0}}},
            'mesh axis "x" has size "0"; expected an integer >= 1',
        ),
        (
            "unknown spec key",
            {**PLAN, "spec": {OP: {"pieces": 2}}},
            f'spec of operation "{OP}" is not valid; expected an object with some of "dim", '
            '"parts", "chunk", "sizes", "grid", "over"',
        ),
    ],
)
def test_bad_plans_are_refused(
    label: str, body: dict[str, Any], message: str, as_user: Any, graph: Any
) -> None:
    response = post(as_user("owner"), f"/graphs/{graph.pk}/plans", body)
    assert (response.status_code, response.json()["error"]["message"]) == (422, message)
    assert ShardPlan.objects.count() == 0


def test_plans_are_read_changed_and_deleted(as_user: Any, graph: Any) -> None:
    client = as_user("owner")
    plan = post(client, f"/graphs/{graph.pk}/plans", PLAN).json()
    listed = client.get(f"{API}/graphs/{graph.pk}/plans").json()["plans"]
    assert [p["name"] for p in listed] == ["two"]
    renamed = patch(client, f"/graphs/{graph.pk}/plans/{plan['id']}", {"name": "renamed"})
    assert (renamed.status_code, renamed.json()["name"]) == (200, "renamed")
    assert client.delete(f"{API}/graphs/{graph.pk}/plans/{plan['id']}").status_code == 204
    missing = client.get(f"{API}/graphs/{graph.pk}/plans/{plan['id']}")
    assert (missing.status_code, missing.json()["error"]["message"]) == (
        404,
        f'plan "{plan["id"]}" of graph "{graph.title}" does not exist',
    )


def test_a_plan_that_does_not_fit_the_document_is_refused(as_user: Any, graph: Any) -> None:
    client = as_user("editor")
    unknown = post(
        client, f"/graphs/{graph.pk}/plans", {**PLAN, "spec": {"nope": {"dim": "x", "parts": 2}}}
    )
    assert (unknown.status_code, unknown.json()["error"]) == (
        422,
        {
            "code": "invalid_edit",
            "message": 'plan "two": edit op 1 (shard): operation "nope" does not exist; expected '
            "the id of one of the 1 operations in the graph",
        },
    )
    assert ShardPlan.objects.count() == 0
    made = post(client, f"/graphs/{graph.pk}/plans", PLAN).json()
    bad_split = patch(
        client, f"/graphs/{graph.pk}/plans/{made['id']}", {"spec": {OP: {"dim": "Q", "parts": 2}}}
    )
    assert (bad_split.status_code, bad_split.json()["error"]) == (
        422,
        {
            "code": "invalid_edit",
            "message": f'plan "two": edit op 1 (shard): axis "Q" cannot be resolved: operation '
            f'"{OP}" has no IndexAxes; expected a dim number 0..1',
        },
    )
    assert ShardPlan.objects.get().spec == PLAN["spec"]


def test_a_taken_plan_name_is_a_conflict(as_user: Any, graph: Any) -> None:
    client = as_user("editor")
    post(client, f"/graphs/{graph.pk}/plans", PLAN)
    other = post(client, f"/graphs/{graph.pk}/plans", {**PLAN, "name": "other"}).json()
    again = post(client, f"/graphs/{graph.pk}/plans", PLAN)
    renamed = patch(client, f"/graphs/{graph.pk}/plans/{other['id']}", {"name": "two"})
    message = 'plan name "two" is taken on this graph; pick another name'
    for response in (again, renamed):
        assert (response.status_code, response.json()["error"]) == (
            409,
            {"code": "conflict", "message": message},
        )
    assert sorted(ShardPlan.objects.values_list("name", flat=True)) == ["other", "two"]


def test_operations_a_plan_does_not_name_run_whole(as_user: Any, graph: Any) -> None:
    client = as_user("editor")
    # the loom example's add is split into two placed applications; a plan that names no
    # operation costs the graph run whole, whatever the document's applications are now: on
    # one device with no mesh (issue 35), reading both int32 [0:10, 0:5] inputs and writing
    # their sum, all three held at once
    plan = post(client, f"/graphs/{graph.pk}/plans", {**PLAN, "spec": {}}).json()
    cost = client.get(f"{API}/graphs/{graph.pk}/plans/{plan['id']}/cost")
    fields = ("version", "devices", "transfers", "transferBytes", "collectives")
    whole = {"mesh": "", "coords": [], "inputs": 400, "outputs": 200, "temporaries": 0}
    assert (cost.status_code, {k: cost.json()[k] for k in fields}) == (
        200,
        {"version": 1, "devices": [whole | {"total": 600}], "transfers": [], "transferBytes": 0}
        | {"collectives": []},
    )
    assert [(d["coords"], d["peakBytes"]) for d in cost.json()["ledger"]] == [([], 600)]
    # and generating it takes the applications away
    response = post(client, f"/graphs/{graph.pk}/plans/{plan['id']}/generate", {"baseVersion": 1})
    assert (response.status_code, response.json()["issues"]) == (200, [])
    assert [n for n in state(graph)[2]["nodes"] if n["type"].endswith("/Application")] == []


def test_a_failed_generate_leaves_the_live_document_as_stored(
    as_user: Any, graph: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = post(as_user("owner"), f"/graphs/{graph.pk}/plans", PLAN).json()

    def disk_full(self: ShardPlan, *args: Any, **kwargs: Any) -> None:
        raise DatabaseError("could not extend file: No space left on device")

    # when the database fails on the plan's record, after the edit was applied in the same
    # transaction
    monkeypatch.setattr(ShardPlan, "save", disk_full)
    with pytest.raises(DatabaseError):
        services.do_generate_plan(graph.owner, graph.pk, plan["id"], 1)
    monkeypatch.undo()
    # then nothing was stored, and the live document is the stored one again (the edit moved
    # it on before the rollback: it is rebuilt because its version is not the stored one)
    assert state(graph)[1] == 1
    live = services.live_document(Graph.objects.get(pk=graph.pk))
    assert (live.version, live.document.to_json()) == (1, state(graph)[2])


def test_an_http_edit_sent_again_with_its_id_is_answered_not_applied(
    as_user: Any, graph: Any
) -> None:
    client = as_user("editor")
    ops = [{"op": "update_node", "id": T0, "label": "a"}]
    body = {"baseVersion": 1, "ops": ops, "id": "r1"}
    first = post(client, f"/graphs/{graph.pk}/edits", body)
    assert (first.status_code, first.json()["version"]) == (200, 2)
    after = state(graph)
    # when the same edit is posted again (a script retrying after a lost answer)
    again = post(client, f"/graphs/{graph.pk}/edits", body)
    # then it gets the same answer and nothing more is stored
    assert (again.status_code, again.json()) == (200, first.json())
    assert state(graph) == after
    assert GraphVersion.objects.get(graph=graph, number=2).edit_id == "r1"
    # and without an id the same ops are a new edit
    plain = post(client, f"/graphs/{graph.pk}/edits", {"baseVersion": 2, "ops": ops})
    assert (plain.status_code, plain.json()["version"]) == (200, 3)


@pytest.mark.parametrize(
    ("edit_id", "message"),
    [
        ("", "body.payload.id: String should have at least 1 character"),
        ("x" * 101, "body.payload.id: String should have at most 100 characters"),
        (7, "body.payload.id: Input should be a valid string"),
    ],
)
def test_an_http_edit_id_is_a_string_of_1_to_100_characters(
    edit_id: Any, message: str, as_user: Any, graph: Any
) -> None:
    client = as_user("owner")
    before = state(graph)
    body = {"baseVersion": 1, "ops": [{"op": "update_node", "id": T0, "label": "a"}], "id": edit_id}
    response = post(client, f"/graphs/{graph.pk}/edits", body)
    assert (response.status_code, response.json()) == (
        422,
        {"error": {"code": "invalid_request", "message": message}},
    )
    assert state(graph) == before
