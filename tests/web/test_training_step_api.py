"""``POST /api/v1/graphs/<id>/training-step`` (issue 32): a new graph of the caller's holding the
training step of a graph they may view; refusals name the bad value, store nothing, and leave
the server answering others."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from geon import core as gc
from geon.graphs.models import Graph, GraphVersion, Membership
from geon.graphs.services import do_create_graph

pytestmark = pytest.mark.django_db

API = "/api/v1"


def _regression() -> dict[str, Any]:
    B, D, E = gc.Axis("B", 4), gc.Axis("D", 3), gc.Axis("E", 2)
    w = gc.variable([D - 1, E], name="w", init="normal")
    x = gc.placeholder([B, D], name="x")
    t = gc.placeholder([B, E], name="t")
    y = gc.dot(x, w, name="y")
    return gc.graph([gc.mean(gc.square(y - t), name="loss")]).to_json()


@pytest.fixture
def model(user: Any) -> Any:
    return do_create_graph(owner=user, title="Regression", document=_regression())


def _stored() -> tuple[int, int]:
    return Graph.objects.count(), GraphVersion.objects.count()


def test_a_viewer_makes_a_training_step_as_a_new_graph_of_theirs(
    client: Client, model: Any, other_user: Any
) -> None:
    Membership.objects.create(graph=model, user=other_user, role="viewer")
    client.force_login(other_user)
    answer = client.post(
        f"{API}/graphs/{model.pk}/training-step",
        {"optimizer": "adam", "lr": 0.01},
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["title"], body["owner"], body["version"]) == (
        "Regression (training step)", "bob", 1,
    )  # fmt: skip
    labels = {n.get("label") for n in body["document"]["nodes"]}
    assert {"loss", "w.next", "w.m", "w.v", "w.m.next", "w.v.next", "step"} <= labels
    assert [i for i in body["issues"] if i["severity"] == "error"] == []
    step = Graph.objects.get(pk=body["id"])
    assert step.current_version is not None
    assert step.current_version.message == 'training step (adam, lr 0.01) of "Regression"'
    # the original is unchanged
    assert model.current_version.number == 1


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"optimizer": "lion", "lr": 0.1}, 'optimizer "lion" is unknown; expected one of'),
        ({"lr": -1}, 'learning rate "-1.0" is invalid; expected a number in (0, 1e+06]'),
        ({"lr": 0.1, "loss": "y"}, 'the loss "y" has axes (E, B); expected a scalar'),
    ],
)
def test_refusals_name_the_value_store_nothing_and_others_are_answered(
    client: Client, model: Any, user: Any, payload: dict[str, Any], message: str
) -> None:
    before = _stored()
    client.force_login(user)
    answer = client.post(
        f"{API}/graphs/{model.pk}/training-step", payload, content_type="application/json"
    )
    assert answer.status_code == 422
    assert answer.json()["error"]["message"].startswith(message)
    assert "Traceback" not in answer.content.decode()
    assert _stored() == before
    other = Client()
    other.force_login(user)
    assert other.get(f"{API}/graphs/{model.pk}").status_code == 200


def test_a_graph_past_the_web_bound_is_refused_before_any_work(
    client: Client, model: Any, user: Any, settings: Any
) -> None:
    settings.GEON_TRAIN_WEB_MAX_OPERATIONS = 2
    before = _stored()
    client.force_login(user)
    answer = client.post(
        f"{API}/graphs/{model.pk}/training-step", {"lr": 0.1}, content_type="application/json"
    )
    assert answer.status_code == 422
    assert answer.json()["error"] == {
        "code": "too_large",
        "message": "the graph has 4 operations; the web derives the training step of at most 2 "
        "(export the graph and run geon train, which takes up to 20,000)",
    }
    assert _stored() == before


def test_someone_without_a_role_gets_404(client: Client, model: Any, other_user: Any) -> None:
    before = _stored()
    client.force_login(other_user)
    answer = client.post(
        f"{API}/graphs/{model.pk}/training-step", {"lr": 0.1}, content_type="application/json"
    )
    assert answer.status_code == 404
    assert _stored() == before
