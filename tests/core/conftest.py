"""Fixtures for the document, checker and sharding tests: the loom example and a small builder
of LoomGraph documents with deterministic UUIDs."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import pytest

from geon.core.graph import APPLICATION, IPF_INDEX, IPF_SIGNATURE, OPERATION, TENSOR, Graph

EXAMPLE_OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
EXAMPLE_APPS = ("2524fb44-d169-4afd-90fa-09711462e4b3", "2af709e2-c792-4712-80cc-0624ee767115")
EXAMPLE_T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
EXAMPLE_T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"
EXAMPLE_Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"


def example_text() -> str:
    return resources.files("geon").joinpath("examples/loom_sharded_add.json").read_text("utf-8")


@pytest.fixture
def loom_text() -> str:
    return example_text()


@pytest.fixture
def loom_doc() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(example_text())
    return data


def uid(n: int) -> str:
    """A deterministic UUID for test node number ``n``."""
    return f"00000000-0000-4000-8000-{n:012d}"


def rng(start: list[int], end: list[int]) -> dict[str, list[int]]:
    return {"start": list(start), "end": list(end)}


def ipf(projection: list[list[int]], offset: list[int], shape: list[int]) -> dict[str, Any]:
    return {"affineMap": {"projection": projection, "offset": offset}, "shape": shape}


def identity_ipf(rank: int, offset: list[int] | None = None) -> dict[str, Any]:
    return ipf(
        [[int(r == c) for c in range(rank)] for r in range(rank)],
        offset or [0] * rank,
        [1] * rank,
    )


class Doc:
    """Builds LoomGraph documents node by node; every method returns the new node's id."""

    def __init__(self) -> None:
        self.count = 0
        self.id = uid(999_999)
        self.nodes: list[dict[str, Any]] = []

    def _id(self) -> str:
        self.count += 1
        return uid(self.count)

    def add(self, node: dict[str, Any]) -> str:
        self.nodes.append(node)
        return str(node["id"])

    def tensor(self, start: list[int], end: list[int], dtype: str = "float32", **kw: Any) -> str:
        node = {
            "id": self._id(),
            "type": TENSOR,
            "body": {"dtype": dtype, "range": rng(start, end)},
        }
        node.update(kw)
        return self.add(node)

    def op(
        self,
        inputs: dict[str, list[str]],
        outputs: dict[str, list[str]],
        kernel: str = "op:add",
        signature: bool = True,
    ) -> str:
        """An elementwise-style op over whole tensors with an identity signature."""
        body: dict[str, Any] = {"kernel": kernel, "inputs": {}, "outputs": {}}
        sig: dict[str, Any] = {"inputs": {}, "outputs": {}}
        index = None
        for side, selmap in (("inputs", inputs), ("outputs", outputs)):
            for key, tids in selmap.items():
                body[side][key] = []
                sig[side][key] = []
                for tid in tids:
                    r = self.get(tid)["body"]["range"]
                    body[side][key].append({"tensorId": tid, "range": copy.deepcopy(r)})
                    sig[side][key].append(identity_ipf(len(r["start"]), list(r["start"])))
                    shape = [b - a for a, b in zip(r["start"], r["end"], strict=True)]
                    index = rng([0] * len(shape), shape)
        tags: dict[str, Any] = {}
        if signature:
            tags = {IPF_INDEX: index, IPF_SIGNATURE: sig}
        return self.add({"id": self._id(), "type": OPERATION, "body": body, "tags": tags})

    def app(self, op_id: str, index: dict[str, Any] | None, **sides: Any) -> str:
        body: dict[str, Any] = {"operationId": op_id}
        body.update(sides)
        tags = {IPF_INDEX: index} if index is not None else {}
        return self.add({"id": self._id(), "type": APPLICATION, "body": body, "tags": tags})

    def get(self, node_id: str) -> dict[str, Any]:
        return next(n for n in self.nodes if n["id"] == node_id)

    def json(self) -> dict[str, Any]:
        return {"id": self.id, "nodes": copy.deepcopy(self.nodes)}

    def graph(self) -> Graph:
        return Graph.from_json(self.json())


@pytest.fixture
def doc() -> Doc:
    return Doc()


@pytest.fixture
def make_doc() -> Callable[[], Doc]:
    return Doc
