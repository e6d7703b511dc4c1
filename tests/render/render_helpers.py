"""Reading diagrams back: DOT through pygraphviz, SVG through ElementTree."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygraphviz

from geon.core.graph import Graph

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"

LOOM_OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
LOOM_T0 = "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"
LOOM_T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"
LOOM_Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"
LOOM_APP_HIGH = "2524fb44-d169-4afd-90fa-09711462e4b3"  # index [5:10, 0:5]
LOOM_APP_LOW = "2af709e2-c792-4712-80cc-0624ee767115"  # index [0:5, 0:5]


def loom_json() -> dict[str, Any]:
    path = ROOT / "geon" / "examples" / "loom_sharded_add.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def loom_graph() -> Graph:
    return Graph.from_json(loom_json())


def label_text(label: str) -> str:
    """The text an HTML-like label shows: lines joined by newlines, tags dropped."""
    text = re.sub(r"<br\s*/>", "\n", label)
    text = re.sub(r"<[^>]*>", "", text)
    return html.unescape(text.replace("\\\\", "\\"))


@dataclass(frozen=True)
class DotView:
    """A parsed DOT diagram keyed by document id (through each node's ``id`` attribute)."""

    agraph: pygraphviz.AGraph

    @classmethod
    def parse(cls, text: str) -> DotView:
        return cls(pygraphviz.AGraph(string=text))

    def name_of(self, doc_id: str) -> str:
        for node in self.agraph.nodes():
            if node.attr.get("id") == "node-" + doc_id:
                return str(node)
        raise KeyError(doc_id)

    def attr(self, name: str, key: str) -> str:
        return str(self.agraph.get_node(name).attr.get(key) or "")

    def text(self, name: str) -> str:
        return label_text(self.attr(name, "label"))

    def clusters(self) -> dict[str, set[str]]:
        return {str(s.name): {str(n) for n in s.nodes()} for s in self.agraph.subgraphs()}

    def cluster_attr(self, cluster: str, key: str) -> str:
        return str(self.agraph.get_subgraph(cluster).graph_attr.get(key) or "")

    def edges(self) -> set[tuple[str, str, str]]:
        return {
            (str(e[0]), str(e[1]), label_text(str(e.attr.get("label") or "")))
            for e in self.agraph.edges()
        }


@dataclass(frozen=True)
class SvgView:
    """A rendered SVG: node, edge and cluster groups by class."""

    root: ET.Element

    @classmethod
    def parse(cls, data: bytes) -> SvgView:
        return cls(ET.fromstring(data))

    def groups(self, kind: str) -> list[ET.Element]:
        return [g for g in self.root.iter(f"{SVG}g") if kind in (g.get("class") or "").split()]

    def node_group(self, element_id: str) -> ET.Element:
        found = [g for g in self.groups("node") if g.get("id") == element_id]
        assert len(found) == 1, element_id
        return found[0]

    def lines(self, group: ET.Element) -> list[str]:
        return ["".join(t.itertext()) for t in group.iter(f"{SVG}text")]

    def tooltip(self, group: ET.Element) -> str:
        titles = [a.get(f"{XLINK}title") for a in group.iter(f"{SVG}a")]
        return str(titles[0]) if titles else ""
