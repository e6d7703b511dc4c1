"""What a review's approval covers, and so when it goes stale (docs/reviews.md, issue 18): the
one rule, like Gerrit's copy conditions but written out.

An approval covers the *subject* of a document (and, for a plan review, of the plan): every
node but its ``label`` and its presentation tags (``Layout``, ``Group``, ``About``), except
``Note`` nodes and an axis's ``doc`` (notes); and the plan's ``mesh``, ``axisMapping``,
``inputs`` and ``spec``. So kernels, parameters, dtypes, axes and their lengths, splits, index
ranges, projections and placements are covered; moving, renaming, grouping and annotating are
not.

>>> from geon.core.nodes import OPERATION
>>> op = {"id": "o", "type": OPERATION, "label": "dot 2", "body": {"kernel": "op:dot"},
...       "tags": {LAYOUT: {"x": 1, "y": 2}}}
>>> moved = {**op, "label": "dot two", "tags": {LAYOUT: {"x": 9, "y": 9}}}
>>> stale_because(approval_subject({"nodes": [op]}), approval_subject({"nodes": [moved]}))
[]
>>> other = {**op, "body": {"kernel": "op:add"}}
>>> stale_because(approval_subject({"nodes": [op]}), approval_subject({"nodes": [other]}))
['"dot 2": body.kernel']
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from geon.core.nodes import AXIS, GEON_TAG_PREFIX, GROUP, LAYOUT, NOTE

__all__ = ["PRESENTATION_TAGS", "approval_subject", "fingerprint", "stale_because"]

#: Tags that only change how a document looks: an approval survives changes to them.
PRESENTATION_TAGS = frozenset({LAYOUT, GROUP, GEON_TAG_PREFIX + "About"})

#: The fields of a plan an approval covers (its name is a label).
PLAN_FIELDS = ("mesh", "axisMapping", "inputs", "spec")

Subject = dict[str, Any]


def approval_subject(document: dict[str, Any], plan: dict[str, Any] | None = None) -> Subject:
    """What an approval of ``document`` (with ``plan``, a plan's JSON, for a plan review)
    covers: ``{"nodes": {id: {"name", "fields": {field: value}}}, "plan": {field: value}}``.
    ``name`` is for people (the label, else the kind) and is not compared."""
    nodes: dict[str, Any] = {}
    for node in document.get("nodes", []):
        kind = node.get("type", "")
        if kind == NOTE:
            continue
        body = dict(node.get("body") or {})
        if kind == AXIS:
            body.pop("doc", None)
        fields: dict[str, Any] = {"type": kind}
        fields.update({f"body.{key}": value for key, value in body.items()})
        for tag, value in (node.get("tags") or {}).items():
            if tag not in PRESENTATION_TAGS:
                fields[f"tags.{_short(tag)}"] = value
        name = node.get("label") or body.get("name") or _short(kind)
        nodes[node["id"]] = {"name": str(name), "fields": fields}
    covered = {key: plan.get(key) for key in PLAN_FIELDS} if plan is not None else {}
    return {"nodes": nodes, "plan": covered}


def fingerprint(subject: Subject) -> str:
    """A short digest of a subject (equal subjects, equal digests): what a verdict stores."""
    compared = {
        "nodes": {key: node["fields"] for key, node in subject["nodes"].items()},
        "plan": subject["plan"],
    }
    text = json.dumps(compared, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def stale_because(old: Subject, new: Subject) -> list[str]:
    """What changed in the covered subject from ``old`` to ``new``, for people: one line per
    node added, removed or changed (with its fields) and per plan field; empty: the approval
    holds."""
    found: list[str] = []
    before, after = old["nodes"], new["nodes"]
    for key, node in after.items():
        was = before.get(key)
        if was is None:
            found.append(f'"{node["name"]}" added')
            continue
        fields = sorted(
            name
            for name in set(was["fields"]) | set(node["fields"])
            if was["fields"].get(name) != node["fields"].get(name)
        )
        if fields:
            found.append(f'"{node["name"]}": ' + ", ".join(fields))
    found.extend(f'"{node["name"]}" removed' for key, node in before.items() if key not in after)
    found.extend(
        f"plan {name}" for name in PLAN_FIELDS if old["plan"].get(name) != new["plan"].get(name)
    )
    return found


def _short(url: str) -> str:
    """The last name of a type or tag URL (``.../tags/Placement`` -> ``Placement``)."""
    return url.rsplit("/", 1)[-1]
