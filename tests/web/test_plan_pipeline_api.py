"""A shard plan's pipeline stages over ``/api/v1/`` (issue 33, DESIGN.md §12): stored with the
plan (``ShardPlan.pipeline``), checked when it is saved by the core's own reading (every refusal
names the bad value and what is valid, and changes nothing), its cost carrying the ``pipeline``
section ``geon cost`` prints, and a suggestion of the search saved with its pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches
from django.core.exceptions import ValidationError
from django.test import Client, override_settings

from geon.cli import main
from geon.core.errors import GeonError
from geon.core.graph import Graph as Document
from geon.core.plans import apply_plan, read_plan
from geon.core.plans.contract import CONTRACTED_SPLIT
from geon.core.plans.cost import cost_report, load_profile
from geon.core.plans.cost.pipelined import check_stages
from geon.core.plans.pipeline import PipelineError, read_pipeline
from geon.examples.training import training_example
from geon.graphs.models import Graph, Membership, ShardPlan
from geon.graphs.services import do_create_graph
from geon.graphs.services.plan_jobs import CACHE, cost_key
from geon.graphs.tasks import plan_cost_job
from tests.core.plans.pipeline_docs import GROUP, chain
from tests.hostile.test_plan_cost_maxima import UNCONSUMED

pytestmark = pytest.mark.django_db

API = "/api/v1"
HALVES = [["layers.0", "layers.1"], ["layers.2", "layers.3"]]
PIPELINE = {"axis": "pp", "microbatches": 4, "schedule": "1f1b", "stages": HALVES}
PLAN = {
    "name": "pp and dp",
    "mesh": {"name": "pod", "axes": {"pp": 2, "dp": 2}},
    "axisMapping": {"N": "dp"},
    "pipeline": PIPELINE,
}


@pytest.fixture
def graph(user: Any) -> Graph:
    """Four layers scoped ``layers.0`` ... ``layers.3`` (as an imported model's are)."""
    return do_create_graph(owner=user, title="Layers", document=chain().to_json())


@pytest.fixture
def owner(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(API + path, json.dumps(body), content_type="application/json")


def patch(client: Client, path: str, body: Any) -> Any:
    return client.patch(API + path, json.dumps(body), content_type="application/json")


def test_a_pipelined_plan_is_stored_and_read_back(owner: Client, graph: Graph) -> None:
    # given a plan with pipeline stages
    # when it is saved
    made = post(owner, f"/graphs/{graph.pk}/plans", PLAN)
    # then it is answered, stored and listed with its pipeline as sent
    assert made.status_code == 201, made.content
    assert made.json()["pipeline"] == PIPELINE
    assert ShardPlan.objects.get().pipeline == PIPELINE
    got = owner.get(f"{API}/graphs/{graph.pk}/plans/{made.json()['id']}").json()
    assert got["pipeline"] == PIPELINE
    listed = owner.get(f"{API}/graphs/{graph.pk}/plans").json()["plans"]
    assert [p["pipeline"] for p in listed] == [PIPELINE]


def test_a_plan_without_a_pipeline_reads_null_and_is_stored_empty(
    owner: Client, graph: Graph
) -> None:
    # given a plan sent without a pipeline, and one sent with an empty one
    plain = {k: v for k, v in PLAN.items() if k != "pipeline"}
    first = post(owner, f"/graphs/{graph.pk}/plans", plain)
    second = post(owner, f"/graphs/{graph.pk}/plans", {**plain, "name": "b", "pipeline": {}})
    # then both have none: null in the answer, {} stored (the field's default)
    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["pipeline"] is None and second.json()["pipeline"] is None
    assert [p.pipeline for p in ShardPlan.objects.order_by("name")] == [{}, {}]


def test_a_patch_adds_changes_keeps_and_removes_the_pipeline(owner: Client, graph: Graph) -> None:
    plain = {k: v for k, v in PLAN.items() if k != "pipeline"}
    made = post(owner, f"/graphs/{graph.pk}/plans", plain).json()
    path = f"/graphs/{graph.pk}/plans/{made['id']}"
    # added
    added = patch(owner, path, {"pipeline": PIPELINE})
    assert added.status_code == 200, added.content
    assert added.json()["pipeline"] == PIPELINE
    # changed to GPipe over balanced stages
    gpipe = {**PIPELINE, "schedule": "gpipe", "stages": "balanced"}
    assert patch(owner, path, {"pipeline": gpipe}).json()["pipeline"] == gpipe
    # kept when another field changes
    renamed = patch(owner, path, {"name": "renamed"}).json()
    assert (renamed["name"], renamed["pipeline"]) == ("renamed", gpipe)
    # removed by null, and by {}
    assert patch(owner, path, {"pipeline": None}).json()["pipeline"] is None
    assert ShardPlan.objects.get().pipeline == {}
    patch(owner, path, {"pipeline": gpipe})
    assert patch(owner, path, {"pipeline": {}}).json()["pipeline"] is None


def test_changing_the_pipeline_forgets_what_the_plan_generated(owner: Client, graph: Graph) -> None:
    # given a pipelined plan generated into the document
    made = post(owner, f"/graphs/{graph.pk}/plans", PLAN).json()
    path = f"/graphs/{graph.pk}/plans/{made['id']}"
    generated = post(owner, f"{path}/generate", {"baseVersion": 1})
    assert generated.status_code == 200, generated.content
    assert ShardPlan.objects.get().applications["operations"]
    # when only its microbatches change, what it wrote is still its own
    patch(owner, path, {"pipeline": {**PIPELINE, "microbatches": 8}})
    assert ShardPlan.objects.get().applications["operations"]
    # when its pipeline is removed (the plan is then written on the whole mesh), it is not
    patch(owner, path, {"pipeline": None})
    assert ShardPlan.objects.get().applications == {}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"schedule": "zb"},
            'pipeline schedule "zb" is unknown; expected one of "gpipe", "1f1b", "interleaved"',
        ),
        (
            {"stages": [["layers.0", "layers.1"], ["layers.2", "decoder"]]},
            'pipeline stage 1 scope "decoder" matches no operation\'s Group scope; expected a '
            "scope that is, or lies above, one (the document's top-level Group scopes are "
            '("layers.0", "layers.1", "layers.2", "layers.3"))',
        ),
        (
            {"schedule": "interleaved", "virtualStages": 2, "microbatches": 3},
            'pipeline schedule "interleaved" with virtualStages "2" and microbatches "3" on 2 '
            'devices of "pp"; expected virtualStages >= 2 and microbatches a multiple of 2',
        ),
        ({"microbatches": 0}, 'pipeline microbatches is "0"; expected an integer from 1 to 1024'),
        ({"microbatches": 1025}, 'microbatches is "1025"; expected an integer from 1 to 1024'),
        # (the mesh's axes in its stored order: PostgreSQL's jsonb keeps keys sorted)
        ({"axis": "tp"}, 'pipeline axis "tp" is not an axis of the mesh; expected one of ("'),
    ],
)
def test_a_bad_pipeline_is_refused_naming_the_value_and_changes_nothing(
    owner: Client, graph: Graph, change: dict[str, Any], message: str
) -> None:
    # given a stored pipelined plan
    made = post(owner, f"/graphs/{graph.pk}/plans", PLAN).json()
    # when a plan is created, or the stored one changed, with a bad pipeline
    bad = {**PIPELINE, **change}
    created = post(owner, f"/graphs/{graph.pk}/plans", {**PLAN, "name": "other", "pipeline": bad})
    changed = patch(owner, f"/graphs/{graph.pk}/plans/{made['id']}", {"pipeline": bad})
    # then both are refused 422 naming the value, and nothing is stored or changed
    for response in (created, changed):
        assert response.status_code == 422, response.content
        assert message in response.json()["error"]["message"]
    assert [(p.name, p.pipeline) for p in ShardPlan.objects.all()] == [(PLAN["name"], PIPELINE)]


def test_balanced_stages_past_the_document_s_scopes_are_refused(
    owner: Client, graph: Graph
) -> None:
    plan = {**PLAN, "mesh": {"axes": {"pp": 8}}, "axisMapping": {}}
    plan["pipeline"] = {**PIPELINE, "stages": "balanced", "microbatches": 8}
    answer = post(owner, f"/graphs/{graph.pk}/plans", plan)
    assert answer.status_code == 422
    assert (
        'pipeline stages "balanced" cut the top-level Group scopes into 8 stages but the '
        "document has 4; expected fewer stages" in answer.json()["error"]["message"]
    )
    assert not ShardPlan.objects.exists()


def _geon_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str], document: Any, plan: Any) -> Any:
    """What ``geon cost DOC --plan PLAN`` prints (the command line: the REST answer's oracle)."""
    doc, plan_file = tmp_path / "doc.json", tmp_path / "plan.json"
    doc.write_text(json.dumps(document))
    plan_file.write_text(json.dumps(plan))
    capsys.readouterr()
    assert main(["cost", str(doc), "--plan", str(plan_file)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_the_cost_of_a_pipelined_plan_has_geon_cost_s_pipeline(
    owner: Client,
    graph: Graph,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    schedule: str,
) -> None:
    # given a pipelined plan saved over REST
    plan = {**PLAN, "pipeline": {**PIPELINE, "schedule": schedule}}
    made = post(owner, f"/graphs/{graph.pk}/plans", plan).json()
    # when its cost is asked
    answer = owner.get(f"{API}/graphs/{graph.pk}/plans/{made['id']}/cost")
    assert answer.status_code == 200, answer.content
    cost = answer.json()
    # then it carries geon cost's pipeline section for the same document and plan
    printed = _geon_cost(tmp_path, capsys, chain().to_json(), plan)
    assert cost["pipeline"] == printed["pipeline"]
    pipe = cost["pipeline"]
    assert (pipe["schedule"], pipe["stages"], pipe["microbatches"]) == (schedule, 2, 4)
    assert 0 < pipe["bubble"] < 1 and len(pipe["stageSeconds"]) == 2
    assert len(pipe["grid"]) == 2 * 4  # a forward document: each stage's forward per microbatch
    # the step time includes the bubble, as geon cost's; the ledger is the whole mesh's
    assert cost["time"] == pytest.approx(printed["time"])
    assert sorted(d["coords"] for d in cost["ledger"]) == [[0, 0], [0, 1], [1, 0], [1, 1]]
    # the sends between stages are collectives, one per microbatch
    sends = [c for c in cost["collectives"] if c["kind"] == "send"]
    assert sorted(c["microbatch"] for c in sends) == [0, 1, 2, 3]
    assert all(c["stages"] == [0, 1] and c["meshAxes"] == ["pp"] for c in sends)


def test_an_interleaved_training_step_s_cost_is_geon_cost_s(
    owner: Client, user: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given the SGD training step of the four layers, and an interleaved plan of 4 stages on 2
    # devices (stage k on device k mod 2) over it
    step = chain(train=True).to_json()
    graph = do_create_graph(owner=user, title="Step", document=step)
    pipeline = {
        "axis": "pp",
        "microbatches": 4,
        "schedule": "interleaved",
        "virtualStages": 2,
        "stages": [["layers.0"], ["layers.1"], ["layers.2"], ["layers.3"]],
    }
    plan = {**PLAN, "pipeline": pipeline}
    made = post(owner, f"/graphs/{graph.pk}/plans", plan)
    assert made.status_code == 201, made.content
    # when its cost is asked
    cost = owner.get(f"{API}/graphs/{graph.pk}/plans/{made.json()['id']}/cost").json()
    # then it is geon cost's: the pipeline, the time, and the sends both ways
    printed = _geon_cost(tmp_path, capsys, step, plan)
    assert cost["pipeline"] == printed["pipeline"]
    assert (cost["pipeline"]["stages"], cost["pipeline"]["virtualStages"]) == (4, 2)
    assert cost["time"] == pytest.approx(printed["time"])
    sends = [c for c in cost["collectives"] if c["kind"] == "send"]
    assert len(sends) == len([c for c in printed["collectives"] if c["kind"] == "send"])
    assert {c["pass"] for c in sends} == {"forward", "backward"}


def test_a_plan_without_a_pipeline_has_no_pipeline_in_its_cost(owner: Client, graph: Graph) -> None:
    plain = {k: v for k, v in PLAN.items() if k != "pipeline"}
    made = post(owner, f"/graphs/{graph.pk}/plans", plain).json()
    cost = owner.get(f"{API}/graphs/{graph.pk}/plans/{made['id']}/cost").json()
    assert "pipeline" not in cost and "time" in cost


@override_settings(GEON_PLAN_COST_QUEUE=UNCONSUMED, GEON_PLAN_COST_WEB_MAX_WORK=1)
def test_a_worker_s_cost_of_a_pipelined_plan_has_its_pipeline(owner: Client, graph: Graph) -> None:
    # given a pipelined plan whose cost is past the web process's budget
    caches[CACHE].clear()
    made = post(owner, f"/graphs/{graph.pk}/plans", PLAN).json()
    path = f"{API}/graphs/{graph.pk}/plans/{made['id']}/cost"
    assert owner.get(path).status_code == 202
    # when the worker's task has costed it
    plan = ShardPlan.objects.get()
    job = {"kind": "cost", "graph": str(graph.pk), "version": 1, "plans": [plan.pk]}
    key = cost_key(graph, 1, plan, "h100-sxm-8")
    plan_cost_job({**job, "profile": "h100-sxm-8", "key": key})
    # then the poll's answer has the pipeline too
    answer = owner.get(path)
    assert answer.status_code == 200, answer.content
    assert answer.json()["pipeline"]["schedule"] == "1f1b"
    sends = [c for c in answer.json()["collectives"] if c["kind"] == "send"]
    assert [c["microbatch"] for c in sends] == [0, 1, 2, 3]


def test_a_suggestion_on_a_pp_mesh_is_saved_with_its_pipeline(owner: Client, graph: Graph) -> None:
    # given the search's suggestions on a mesh with a pp axis
    found = owner.get(f"{API}/graphs/{graph.pk}/plans/suggestions", {"mesh": "pp=2,dp=2"})
    assert found.status_code == 200, found.content
    piped = [c for c in found.json()["candidates"] if "pipeline" in c["plan"]]
    assert piped, found.json()
    suggestion = piped[0]
    # when one is saved as it is
    saved = post(owner, f"/graphs/{graph.pk}/plans", suggestion["plan"])
    # then the stored plan keeps its pipeline, and its cost is the suggestion's pipeline
    assert saved.status_code == 201, saved.content
    assert saved.json()["pipeline"] == suggestion["plan"]["pipeline"]
    cost = owner.get(f"{API}/graphs/{graph.pk}/plans/{saved.json()['id']}/cost").json()
    assert cost["pipeline"]["bubble"] == pytest.approx(suggestion["pipeline"]["bubble"])
    assert cost["time"]["upper"] == pytest.approx(suggestion["seconds"])


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_plans_saved_before_it_no_pipeline(user: Any) -> None:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    # given a plan saved before plans carried pipelines (the model of that migration)
    before = [("graphs", "0010_version_summary")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    then = executor.loader.project_state(before).apps
    graph = then.get_model("graphs", "Graph").objects.create(title="Old", owner_id=user.pk)
    then.get_model("graphs", "ShardPlan").objects.create(
        graph=graph, name="dp", mesh={"axes": {"dp": 2}}, axis_mapping={"N": "dp"}, spec={}
    )
    # when the migrations run
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    # then it has none ({}), and may be given one
    plan = ShardPlan.objects.get()
    assert (plan.name, plan.pipeline) == ("dp", {})
    plan.pipeline = PIPELINE
    plan.save()
    assert ShardPlan.objects.get().pipeline == PIPELINE


def test_the_admin_checks_a_plan_s_pipeline_as_the_core_reads_it(
    client: Client, graph: Graph, django_user_model: Any
) -> None:
    # given a pipelined plan, and a superuser in the admin
    made = post_as_owner(client, graph)
    admin = django_user_model.objects.create_superuser("root", password="x")
    client.force_login(admin)
    page = f"/admin/graphs/shardplan/{made['id']}/change/"
    stored = ShardPlan.objects.get()
    form = {
        "graph": str(graph.pk),
        "name": stored.name,
        "mesh": json.dumps(stored.mesh),
        "axis_mapping": json.dumps(stored.axis_mapping),
        "inputs": json.dumps(stored.inputs),
        "spec": json.dumps(stored.spec),
        "applications": json.dumps(stored.applications),
    }
    # when its schedule is changed to one that does not exist
    bad = client.post(page, {**form, "pipeline": json.dumps({**PIPELINE, "schedule": "zb"})})
    # then the form is shown again naming the value, and nothing changes
    assert bad.status_code == 200
    assert "pipeline schedule &quot;zb&quot; is unknown" in bad.content.decode()
    assert ShardPlan.objects.get().pipeline == PIPELINE
    # and a good change is saved (a plan of a mapping only: its spec may be empty)
    good = {**PIPELINE, "microbatches": 8}
    assert client.post(page, {**form, "pipeline": json.dumps(good)}).status_code == 302
    assert ShardPlan.objects.get().pipeline == good


def post_as_owner(client: Client, graph: Graph) -> dict[str, Any]:
    client.force_login(graph.owner)
    made = post(client, f"/graphs/{graph.pk}/plans", PLAN)
    assert made.status_code == 201, made.content
    result: dict[str, Any] = made.json()
    return result


def test_a_stage_scope_held_only_by_a_generated_dot_s_sum_is_found() -> None:
    # given a document whose layers.3 is held only by a dot a generated plan split over its
    # contracted axis (its Group tag kept in the sum's ContractedSplit "original", as
    # geon.core.plans.contract writes it, and as the cost model's stages read it)
    data = chain().to_json()
    for node in data["nodes"]:
        group = (node.get("tags") or {}).get(GROUP)
        if group == {"scope": "layers.3"}:
            del node["tags"][GROUP]
            if node["body"]["kernel"] == "op:dot":
                original = {
                    "label": node.get("label"),
                    "body": node["body"],
                    "tags": {GROUP: group},
                }
                node["tags"][CONTRACTED_SPLIT] = {"original": original}
    document = Document.from_json(data)
    axes = (("pp", 2), ("dp", 2))
    # then its scope is a stage's, and one no operation holds is still refused
    check_stages(document, read_pipeline(PIPELINE, axes))
    other = {**PIPELINE, "stages": [["layers.0"], ["layers.4"]]}
    with pytest.raises(PipelineError) as refused:
        check_stages(document, read_pipeline(other, axes))
    assert 'pipeline stage 1 scope "layers.4" matches no' in str(refused.value)


@pytest.mark.parametrize("role", ["viewer", "reviewer"])
def test_a_viewer_or_reviewer_may_not_set_or_change_a_pipeline(
    client: Client, user: Any, other_user: Any, graph: Graph, role: str
) -> None:
    # given ann's stored pipelined plan and bob a viewer or reviewer of her graph
    client.force_login(user)
    made = post(client, f"/graphs/{graph.pk}/plans", PLAN).json()
    Membership.objects.create(graph=graph, user=other_user, role=role)
    client.force_login(other_user)
    path = f"/graphs/{graph.pk}/plans/{made['id']}"
    # when bob sets a plan with a pipeline, or patches the stored plan's pipeline
    created = post(client, f"/graphs/{graph.pk}/plans", {**PLAN, "name": "bob's"})
    changed = patch(client, path, {"pipeline": {**PIPELINE, "microbatches": 8}})
    removed = patch(client, path, {"pipeline": None})
    # then each is refused 403 and the plan is as ann saved it
    assert [r.status_code for r in (created, changed, removed)] == [403, 403, 403]
    assert [(p.name, p.pipeline) for p in ShardPlan.objects.all()] == [(PLAN["name"], PIPELINE)]


def test_balanced_stages_of_a_training_step_count_its_forward_scopes_as_the_cost_does(
    owner: Client, user: Any
) -> None:
    # given the training example, whose scopes are all a backward's or an optimizer's (step,
    # W1, loss, ...): the cost model has no forward top-level scope to cut
    document, _ = training_example()
    graph = do_create_graph(owner=user, title="Step", document=document.to_json())
    plan = {"name": "pp", "mesh": {"axes": {"pp": 2}}}
    plan["pipeline"] = {**PIPELINE, "stages": "balanced"}
    # when a balanced two-stage plan is saved, then it is refused 422 in the cost model's words
    answer = post(owner, f"/graphs/{graph.pk}/plans", plan)
    assert answer.status_code == 422, answer.content
    message = answer.json()["error"]["message"]
    assert message.startswith('plan "pp": pipeline stages "balanced" cut the top-level Group')
    assert "the document has 0; expected fewer stages" in message
    assert not ShardPlan.objects.exists()
    # (the cost model refuses the same plan in the same words)
    core = read_plan({**plan, "axisMapping": {}, "inputs": {}, "spec": {}})
    with pytest.raises(GeonError) as refused:
        cost_report(apply_plan(document, core), load_profile("cpu-host"), plan=core)
    assert str(refused.value) in message


def test_the_admin_s_check_puts_a_pipeline_s_refusal_on_its_field(graph: Graph) -> None:
    # given a stored plan changed outside the REST (as the admin does)
    plan = ShardPlan(graph=graph, name="pp", mesh=PLAN["mesh"], axis_mapping={"N": "dp"})
    # when its pipeline is malformed, or names an axis the mapping uses, then the pipeline
    # field is refused; a bad mesh is the plan's
    plan.pipeline = {**PIPELINE, "microbatches": 0}
    with pytest.raises(ValidationError) as bad:
        plan.clean()
    assert list(bad.value.message_dict) == ["pipeline"]
    plan.pipeline = {**PIPELINE, "axis": "dp"}
    with pytest.raises(ValidationError) as shared:
        plan.clean()
    assert list(shared.value.message_dict) == ["pipeline"]
    assert 'names mesh axis "dp", which carries the pipeline' in str(shared.value)
    plan.pipeline, plan.mesh = PIPELINE, {"axes": {"pp": 0}}
    with pytest.raises(ValidationError) as mesh:
        plan.clean()
    assert not hasattr(mesh.value, "error_dict")
