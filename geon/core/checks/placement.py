"""PlanPlacement (DESIGN.md §5): a ``Placement`` tag names a Mesh node and coordinates inside it."""

from __future__ import annotations

from collections.abc import Iterator

from geon.core.checks.fastpath import (
    cached,
    is_well_formed,
)
from geon.core.checks.messages import (
    context,
    issue,
    missing,
    names,
    wrong_type,
)
from geon.core.errors import quote
from geon.core.graph import (
    MESH,
    PLACEMENT,
    GraphIndex,
    Node,
)
from geon.core.issues import Issue

__all__ = ["plan_placement"]


def plan_placement(index: GraphIndex, node: Node) -> tuple[Issue, ...]:
    """PlanPlacement's issues of a node with a ``Placement`` tag, cached on its mesh."""
    tag = node.tags.get(PLACEMENT) if node.tags else None
    if tag is None:
        return ()
    mesh = tag.get("mesh") if isinstance(tag, dict) else None
    deps = (index.get(mesh) if isinstance(mesh, str) else None,)
    return cached(index, node, "PP", deps, _plan_placement_uncached)


def _plan_placement_uncached(index: GraphIndex, node: Node) -> Iterator[Issue]:
    """The mesh a ``Placement`` names exists and holds its coordinates."""
    name = "PlanPlacement"
    tag = node.tags.get(PLACEMENT) if node.tags else None
    if tag is None or not is_well_formed(index, node):
        return
    path = f".tags['{PLACEMENT}']"
    mesh_id = tag["mesh"]
    mesh = index.get(mesh_id)
    if mesh is None:
        yield missing(name, node, mesh_id, path + ".mesh", "a Mesh")
        return
    if mesh.type != MESH:
        yield wrong_type(name, node, mesh, path + ".mesh", "a Mesh")
        return
    if not is_well_formed(index, mesh):
        return
    sizes = list(mesh.body["axes"].values())
    axis_names = list(mesh.body["axes"])
    coords = [int(c) for c in tag["coords"]]
    if len(coords) != len(sizes):
        yield issue(
            name,
            "PlacementError",
            "Placement coordinates do not match the mesh",
            f"node {quote(node.id)} is placed at {quote(coords)} of mesh {quote(mesh.id)}, which "
            f"has {len(sizes)} axes {names(axis_names)}; expected {len(sizes)} coordinates",
            (node.id, mesh.id),
            (context("Placement", node.id, path + ".coords", coords),),
            {"mesh": mesh.id, "coords": coords, "meshAxes": dict(mesh.body["axes"])},
        )
        return
    for d, (c, n) in enumerate(zip(coords, sizes, strict=True)):
        if not 0 <= c < n:
            yield issue(
                name,
                "PlacementError",
                "Placement coordinates are outside the mesh",
                f"node {quote(node.id)} is placed at {quote(coords)}; coordinate {c} of mesh axis "
                f"{quote(axis_names[d])} is outside 0..{n - 1} of mesh {quote(mesh.id)}",
                (node.id, mesh.id),
                (context("Placement", node.id, f"{path}.coords[{d}]", c),),
                {"mesh": mesh.id, "coords": coords, "meshAxes": dict(mesh.body["axes"])},
            )
