"""Hostile documents to the checker (issue 13, finding 2: issue explosion, no sign-in needed),
replayed through the checker and through ``POST /api/v1/validate`` with Django's test client.

Before the fix, n identical Applications covering one output gave n(n-1)/2 overlap issues:
n=400 -> 79,800 issues and an 86 MB answer, n=800 -> 319,600 issues and 344 MB. Every bound
here is on *work* (issues produced, bytes answered, box operations counted by
:func:`geon.core.zspace.coverage`), never on time.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.test import Client

from geon.core.checks import (
    COVERAGE_WORK_BASE,
    COVERAGE_WORK_PER_SHARD,
    MAX_OVERLAPS_COUNTED,
    IncrementalChecker,
    check,
    check_document,
    coverage,
)
from geon.core.graph import APPLICATION, IPF_INDEX, OPERATION, TENSOR, Graph
from geon.core.issues import MAX_ISSUES_PER_CHECK, MAX_ISSUES_PER_CONSTRAINT, NOT_LISTED
from geon.core.zspace import ZRange
from geon.graphs.models import Graph as StoredGraph
from geon.graphs.models import GraphVersion

API = "/api/v1"
OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"
COVERAGE = "ApplicationOutputRangeCoverageIsExact"
SUMMARY_MESSAGE = (
    f"... and at least {MAX_OVERLAPS_COUNTED + 1 - MAX_ISSUES_PER_CONSTRAINT} more overlaps of "
    f'outputs "result"[0] (tensor "{Z}") of operation "{OP}"; fix the ones above first'
)
WORK_FOR_IDENTICAL = 2037
"""Box operations of the sweep over identical shards until it has counted 1,001 overlaps: 45
shards in, whatever n is (1,001 pairs compared plus 1,036 kept in the active list)."""

pytestmark = [pytest.mark.timeout(120)]


def app_id(k: int) -> str:
    return f"00000000-0000-4000-8000-{k:012d}"


def identical_applications(document: dict[str, Any], n: int) -> dict[str, Any]:
    """The loom example with its two Applications replaced by ``n`` identical ones, each the
    whole operation (the finding's input: every pair of them overlaps)."""
    doc = copy.deepcopy(document)
    op = next(node for node in doc["nodes"] if node["type"] == OPERATION)
    whole = {
        "type": APPLICATION,
        "body": {
            "operationId": OP,
            "inputs": copy.deepcopy(op["body"]["inputs"]),
            "outputs": copy.deepcopy(op["body"]["outputs"]),
        },
        "tags": {IPF_INDEX: copy.deepcopy(op["tags"][IPF_INDEX])},
    }
    doc["nodes"] = [node for node in doc["nodes"] if node["type"] != APPLICATION]
    doc["nodes"] += [{"id": app_id(k + 1), **copy.deepcopy(whole)} for k in range(n)]
    return doc


def post(client: Client, path: str, body: Any) -> Any:
    return client.post(f"{API}{path}", json.dumps(body), content_type="application/json")


def assert_bounded_overlaps(issues: list[dict[str, Any]]) -> None:
    """20 overlaps listed, then one summary standing for the rest."""
    assert len(issues) == MAX_ISSUES_PER_CONSTRAINT + 1
    assert {(i["constraint"], i["summary"]) for i in issues[:-1]} == {
        (COVERAGE, "Application outputs overlap")
    }
    summary = issues[-1]
    assert {k: summary[k] for k in ("constraint", "type", "severity", "nodeIds", "message")} == {
        "constraint": COVERAGE,
        "type": NOT_LISTED,
        "severity": "error",
        "nodeIds": [OP],
        "message": SUMMARY_MESSAGE,
    }
    assert summary["params"] == {
        "notListed": MAX_OVERLAPS_COUNTED + 1 - MAX_ISSUES_PER_CONSTRAINT,
        "atLeast": True,
        "summaries": ["Application outputs overlap"],
        "tensorId": Z,
        "key": "result",
        "position": 0,
    }


@pytest.mark.parametrize("n", [400, 800])
def test_identical_applications_give_a_bounded_list_of_issues(
    n: int, loom_document: dict[str, Any]
) -> None:
    text = json.dumps(identical_applications(loom_document, n))
    issues = [i.to_json() for i in check_document(text)]
    assert_bounded_overlaps(issues)
    assert len(json.dumps(issues)) < 32_000  # was 86 MB (n=400) and 344 MB (n=800)


@pytest.mark.parametrize("n", [400, 800, 3200])
def test_the_overlap_sweep_stops_counting_whatever_n_is(n: int) -> None:
    found = coverage(ZRange([0, 0], [10, 5]), [ZRange([0, 0], [10, 5])] * n, max_listed=20)
    assert (len(found.overlaps), found.complete) == (20, False)
    assert found.unlisted == MAX_OVERLAPS_COUNTED + 1 - 20
    assert found.work == WORK_FOR_IDENTICAL  # not n(n-1)/2 = 79,800 / 319,600 / 5,118,400 pairs


@pytest.mark.django_db
@pytest.mark.parametrize("n", [400, 800])
def test_validate_answers_the_identical_applications_with_a_bounded_list(
    n: int, client: Client, loom_document: dict[str, Any]
) -> None:
    # no sign-in: the finding's body (544 KB for n=800)
    graphs, versions = StoredGraph.objects.count(), GraphVersion.objects.count()
    response = post(client, "/validate", identical_applications(loom_document, n))
    assert response.status_code == 200
    assert_bounded_overlaps(response.json()["issues"])
    assert len(response.content) < 32_000
    assert (StoredGraph.objects.count(), GraphVersion.objects.count()) == (graphs, versions)


def staircase(n: int) -> tuple[ZRange, list[ZRange]]:
    """Shards laid out against the overlap sweep: every pair overlaps along the sweep's dim but
    no two share a cell, and they leave scattered gaps (box subtraction made n=400 of them 81,000
    gap boxes and 70 s of work before the budget)."""
    return ZRange([0, 0], [2 * n, 2 * n]), [
        ZRange([i, 2 * i], [n + i, 2 * i + 1]) for i in range(n)
    ]


@pytest.mark.parametrize("n", [400, 6400])
def test_coverage_work_stays_within_its_budget_and_still_finds_the_gap(n: int) -> None:
    target, shards = staircase(n)
    found = coverage(target, shards, max_listed=20)
    # the budget is checked before each step, which filters and compares at most the n shards
    # kept active
    assert found.work <= COVERAGE_WORK_PER_SHARD * n + COVERAGE_WORK_BASE + 2 * n
    # out of budget (n(n-1)/2 pairs to compare), the gap is counted in cells: the shards are
    # disjoint, so the count is right, but that was not proven, so it says "at least"
    assert (found.complete, found.gaps_exact, found.gaps, found.overlaps) == (False, False, [], [])
    assert found.gap_cells == target.size - sum(s.size for s in shards)


def test_a_staircase_of_applications_is_one_gap_issue(loom_document: dict[str, Any]) -> None:
    # given 600 applications whose outputs are the staircase, through the checker
    n = 600
    target, shards = staircase(n)
    doc = identical_applications(loom_document, 0)
    doc["nodes"] = [node for node in doc["nodes"] if node["type"] == TENSOR and node["id"] == Z]
    doc["nodes"][0]["body"]["range"] = target.to_json()
    doc["nodes"].append(
        {
            "id": OP,
            "type": OPERATION,
            "body": {
                "kernel": "fill",
                "outputs": {"result": [{"tensorId": Z, "range": target.to_json()}]},
            },
        }
    )
    doc["nodes"] += [
        {
            "id": app_id(k + 1),
            "type": APPLICATION,
            "body": {
                "operationId": OP,
                "outputs": {"result": [{"tensorId": Z, "range": s.to_json()}]},
            },
        }
        for k, s in enumerate(shards)
    ]
    issues = check_document(json.dumps(doc))
    # the applications do not span the output's columns (loom's shard bounding range rule), and
    # leave cells unwritten: two issues, not one per pair or per gap box
    assert [(i.constraint, i.summary) for i in issues] == [
        ("OperationApplicationAgreement", "Applications do not span the operation's selection"),
        (COVERAGE, "Application outputs leave a gap"),
    ]
    cells = target.size - sum(s.size for s in shards)
    assert issues[1].params == {
        "tensorId": Z,
        "key": "result",
        "position": 0,
        "cells": cells,
        "gaps": [],
        "atLeast": True,
    }
    assert issues[1].message == (
        f'the applications of operation "{OP}" leave at least {cells} cells of outputs '
        f'"result"[0] (tensor "{Z}") unwritten: too scattered to list; expected them to cover '
        '"[0:1200, 0:1200]" exactly'
    )


def test_many_bad_selections_of_one_node_are_twenty_and_a_summary(
    loom_document: dict[str, Any],
) -> None:
    # given an operation with 500 inputs that name tensors that do not exist
    doc = copy.deepcopy(loom_document)
    op = next(node for node in doc["nodes"] if node["id"] == OP)
    missing = [
        {"tensorId": app_id(10_000 + k), "range": {"start": [0], "end": [1]}} for k in range(500)
    ]
    op["body"]["inputs"]["tensors"] = missing
    issues = check(Graph.from_json(doc))
    mine = [i for i in issues if i.constraint == "TensorOperationAgreement"]
    assert [i.summary for i in mine] == ["Referenced node does not exist"] * 20 + [
        "More issues not listed"
    ]
    assert mine[-1].params == {"notListed": 480, "summaries": ["Referenced node does not exist"]}
    assert mine[-1].message == (
        f'node "{OP}": ... and 480 more TensorOperationAgreement issues ("Referenced node does '
        'not exist"); fix the ones above first'
    )
    assert len(issues) < 100


def test_a_check_lists_at_most_a_thousand_issues_then_one_summary_per_constraint(
    loom_document: dict[str, Any],
) -> None:
    # given 1,500 tensors with a dtype that does not exist (one issue each, on 1,500 nodes)
    doc = copy.deepcopy(loom_document)
    doc["nodes"] += [
        {
            "id": app_id(20_000 + k),
            "type": TENSOR,
            "body": {"dtype": "int33", "range": {"start": [0], "end": [2]}},
        }
        for k in range(1500)
    ]
    graph = Graph.from_json(doc)
    issues = check(graph)
    assert len(issues) == MAX_ISSUES_PER_CHECK + 1
    assert {i.constraint for i in issues[:-1]} == {"TensorDTypesAreValid"}
    last = issues[-1]
    assert (last.constraint, last.type, last.severity, last.node_ids) == (
        "TensorDTypesAreValid",
        NOT_LISTED,
        "error",
        (),
    )
    assert last.params == {
        "notListed": 500,
        "summaries": ["Tensor dtype is not valid"],
        "firstNodeId": app_id(21_000),
    }
    assert last.message == (
        'document: ... and 500 more TensorDTypesAreValid issues ("Tensor dtype is not valid"); '
        "fix the ones above first"
    )
    # the incremental checker bounds the same way, before and after an edit
    checker = IncrementalChecker(Graph.from_json(doc))
    assert checker.issues == issues
    after = checker.apply([{"op": "remove_node", "id": app_id(20_000)}])
    assert after == check(checker.graph)
    assert after[-1].params["notListed"] == 499


def test_a_cycle_through_thousands_of_nodes_is_one_small_issue() -> None:
    # given 3,000 operations in one ring: t0 -> op0 -> t1 -> ... -> t2999 -> op2999 -> t0
    n = 3000
    tensors = [app_id(30_000 + k) for k in range(n)]
    ops = [app_id(40_000 + k) for k in range(n)]
    whole = {"start": [0], "end": [4]}
    nodes: list[dict[str, Any]] = [
        {"id": t, "type": TENSOR, "body": {"dtype": "float32", "range": whole}} for t in tensors
    ]
    nodes += [
        {
            "id": ops[k],
            "type": OPERATION,
            "body": {
                "kernel": "step",
                "inputs": {"x": [{"tensorId": tensors[k], "range": whole}]},
                "outputs": {"y": [{"tensorId": tensors[(k + 1) % n], "range": whole}]},
            },
        }
        for k in range(n)
    ]
    issues = check_document({"id": app_id(0), "nodes": nodes})
    # then one issue names the first 16 members (in document order) and counts them all
    assert [(i.constraint, len(i.node_ids)) for i in issues] == [("NoTensorOperationCycles", 16)]
    assert issues[0].params == {
        "operationIds": ops[:16],
        "tensorIds": sorted(tensors)[:16],
        "count": 2 * n,
    }
    assert issues[0].message.endswith(
        f'"{tensors[7]}" ... (6000 in all) depend on each other in a cycle; expected every tensor '
        "to be computed before the operations that read it"
    )
    assert len(json.dumps(issues[0].to_json())) < 4_000


def test_an_application_with_thousands_of_keys_gets_small_issues(
    loom_document: dict[str, Any],
) -> None:
    # given an application with 5,000 input keys its operation does not have
    doc = copy.deepcopy(loom_document)
    app = next(node for node in doc["nodes"] if node["type"] == APPLICATION)
    app["body"]["inputs"] = {f"k{k}": [] for k in range(5000)}
    issues = check_document(doc)
    keys = [i for i in issues if i.summary == "Application keys do not match the operation's"]
    assert len(keys) == 1
    assert keys[0].params["keys"] == sorted(f"k{k}" for k in range(5000))[:16]
    assert " and 4984 more)" in keys[0].message
    assert max(len(json.dumps(i.to_json())) for i in issues) < 4_000
