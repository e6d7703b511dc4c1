"""Shard plans in the editor, as a new user would: shard the dot, save it as plan "rows", shard
it differently and save "cols", compare the two side by side with the server's costs, switch
back to "rows"; a refused save changes nothing. Also: the MLP example is readable at fit-to-screen
at 1280x800, and the toolbar stays on one line after a run."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page

from geon.core.graph import PLACEMENT
from tests.browser.helpers import (
    ARTIFACTS,
    Browsers,
    click_box,
    off_loop,
    open_graph,
    painted,
    screenshots,
    sign_in,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: The painter (render/canvas.ts) draws boxes in full (title, dtype, axis chips) from scale 0.45
#: (DETAIL_SCALE), only plain shapes with titles from 0.26, and bare shapes below; the MLP in one
#: row fitted at 0.257. 0.5 asks for full detail with a margin.
READABLE_SCALE = 0.5


PRODUCER = """(label) => {
  const doc = window.geon.state().document;
  const tensor = window.geon.nodeId(label);
  return doc.nodes.find((n) => n.body.outputs?.result?.[0]?.tensorId === tensor).id;
}"""


def producer(tab: Page, label: str) -> str:
    """The id of the operation that writes the tensor labelled ``label``."""
    return str(tab.evaluate(PRODUCER, label))


def app_ranges(tab: Page, label: str) -> list[str]:
    """The IPFIndex ranges of the applications of the operation writing ``label``, sorted."""
    return sorted(
        tab.evaluate(
            """(op) => {
              const idx = 'http://tensortapestry.org/schemas/loom/2024-01/tag_types.jsd#/tags/IPFIndex';
              return window.geon.state().document.nodes
                .filter((n) => n.body.operationId === op)
                .map((n) => JSON.stringify(n.tags[idx]));
            }""",
            producer(tab, label),
        )
    )


def split(tab: Page, axis: str, parts: int) -> None:
    """Split the selected operation along ``axis`` into ``parts`` and wait for the new version."""
    version = tab.evaluate("window.geon.state().version")
    tab.select_option(".geon-shard-axis", axis)
    tab.select_option(".geon-shard-mode", "parts")
    tab.fill(".geon-shard-amount", str(parts))
    tab.click(".geon-shard-apply")
    tab.wait_for_function("(v) => window.geon.state().version === v + 1", arg=version)


def save_plan(tab: Page, name: str) -> None:
    tab.fill(".geon-plan-name", name)
    tab.press(".geon-plan-name", "Enter")
    tab.wait_for_selector(f".geon-plan[data-plan='{name}']")


def plan_rows(tab: Page) -> list[list[str]]:
    """Each listed plan: its name and whether it is marked current."""
    return tab.eval_on_selector_all(
        ".geon-plan",
        "(rows) => rows.map((r) => [r.dataset.plan,"
        " r.querySelector('.geon-plan-current') ? 'current' : ''])",
    )


def test_save_compare_and_switch_shard_plans(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    browsers: Browsers,
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "plans")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery["Dual-axis dot in 2-D"])
    tab.wait_for_selector(".geon-plans .geon-plan-empty")
    # (and the graph is open on her second device)
    other = browsers.new_page()
    sign_in(other, daphne_server, "ann", password)
    open_graph(other, daphne_server, gallery["Dual-axis dot in 2-D"])

    # when ann splits x·y by rows (H into 2) and saves the sharding as plan "rows"
    click_box(tab, "op:dot")
    split(tab, "H", 2)
    rows = app_ranges(tab, "x·y")
    save_plan(tab, "rows")

    # then the plan is listed, marked current, and the server holds its spec
    assert plan_rows(tab) == [["rows", "current"]]
    # and her second device lists it too, without a reload
    other.wait_for_selector(".geon-plan[data-plan='rows'] .geon-plan-current")
    graph_id = gallery["Dual-axis dot in 2-D"]
    plans = tab.evaluate(f"fetch('/api/v1/graphs/{graph_id}/plans').then((r) => r.json())")
    [stored] = plans["plans"]
    xy, yx = producer(tab, "x·y"), producer(tab, "y·x")
    assert (stored["name"], stored["mesh"]) == ("rows", {"name": "rows", "axes": {"devices": 2}})
    assert stored["spec"] == {xy: {"dim": "H", "parts": 2}, yx: {"dim": "H", "parts": 1}}

    # when she saves the same name again, the server's refusal is shown and nothing changes
    tab.fill(".geon-plan-name", "rows")
    tab.press(".geon-plan-name", "Enter")
    tab.wait_for_selector(".geon-plans-error:not(:empty)")
    assert tab.text_content(".geon-plans-error") == (
        'plan name "rows" is taken on this graph; pick another name'
    )
    again = tab.evaluate(f"fetch('/api/v1/graphs/{graph_id}/plans').then((r) => r.json())")
    assert again["plans"] == plans["plans"]
    assert plan_rows(tab) == [["rows", "current"]]
    tab.locator(".geon-plans").scroll_into_view_if_needed()
    shot("01-rows-saved")

    # when she splits x·y by columns (N into 2) instead and saves it as "cols"
    split(tab, "N", 2)
    cols = app_ranges(tab, "x·y")
    assert cols != rows
    save_plan(tab, "cols")
    assert plan_rows(tab) == [["cols", "current"], ["rows", ""]]

    # and, with nothing selected (the plans panel comes first), compares "rows" with "cols"
    tab.evaluate("window.geon.select([])")
    tab.wait_for_selector(".geon-shards", state="hidden")
    tab.select_option(".geon-compare-a", label="rows")
    tab.select_option(".geon-compare-b", label="cols")
    tab.click(".geon-compare-go")
    tab.wait_for_selector(".geon-compare-table")

    # then the table shows the server's cost of each, the better figure marked
    listed = tab.evaluate(
        f"fetch('/api/v1/graphs/{graph_id}/plans').then((r) => r.json()).then((b) => b.plans)"
    )
    costs = {
        p["name"]: tab.evaluate(
            f"fetch('/api/v1/graphs/{graph_id}/plans/{p['id']}/cost').then((r) => r.json())"
        )
        for p in listed
    }
    # each cell: its text, and "better" when it is marked as the lower figure
    table = tab.eval_on_selector_all(
        ".geon-compare-row",
        "(rows) => rows.map((r) => [r.dataset.label, ...[...r.querySelectorAll('td')].map((td) =>"
        " td.firstChild.textContent + (td.classList.contains('better') ? ' better' : ''))])",
    )
    assert [h.strip() for h in tab.locator(".geon-compare-table thead th").all_text_contents()] == [
        f"at version {costs['rows']['version']}",
        "rows",
        "cols",
    ]
    # the dot graph is tiny: 2 devices, nothing moves, and y·x (whole in both) sits on device 0
    rows_cost, cols_cost = costs["rows"], costs["cols"]
    totals = {n: [d["total"] for d in c["devices"]] for n, c in costs.items()}
    assert (rows_cost["transferBytes"], cols_cost["transferBytes"]) == (0, 0)
    assert totals == {"rows": [240, 152], "cols": [240, 128]}
    assert table == [
        ["devices used", "2", "2"],
        ["transfers", "0", "0"],
        ["bytes moved", "0 B", "0 B"],
        ["peak memory per device", "240 B", "240 B"],
        ["memory on all devices", "392 B", "368 B better"],
        # under the default hardware profile: two kernel floors each, nothing moves, all fits
        ["step time, at most (h100-sxm-8)", "10 µs", "10 µs"],
        ["step time, at least", "10 µs", "10 µs"],
        ["collectives", "none", "none"],
        ["bytes in collectives", "0 B", "0 B"],
        # what bounds the step, and the busiest device's memory by its parts (issue 35)
        ["step time dominated by", "compute (10 µs of 10 µs)", "compute (10 µs of 10 µs)"],
        ["peak memory, with temporaries", "240 B", "240 B"],
        ["of which parameters", "48 B", "48 B"],
        ["of which activations", "192 B", "192 B"],
        ["device memory", "fits", "fits"],
        ["device (0)", "240 B", "240 B"],
        ["device (1)", "152 B", "128 B better"],
        # and per operation, how each plan splits it
        ["op:dot → x·y", "H over devices (2)", "N over devices (2)"],
        ["op:dot → y·x", "whole", "whole"],
    ]
    shot("02-compare")

    # when she switches back to "rows"
    version = tab.evaluate("window.geon.state().version")
    tab.locator(".geon-plan[data-plan='rows'] .geon-plan-switch").click()
    tab.wait_for_function("(v) => window.geon.state().version === v + 1", arg=version)

    # then the document's applications are those of "rows" again, placed on the plan's mesh
    # (y·x, whole in the plan, is one application on the first device), and "rows" is current
    assert app_ranges(tab, "x·y") == rows
    assert len(app_ranges(tab, "y·x")) == 1
    placed = tab.evaluate(
        "(tag) => window.geon.state().document.nodes"
        ".filter((n) => n.type.endsWith('/Application'))"
        ".map((n) => [n.body.operationId, n.tags[tag].coords])",
        PLACEMENT,
    )
    # (in any order: PostgreSQL's jsonb keeps a plan's spec with its keys reordered)
    assert sorted(placed) == sorted([[xy, [0]], [xy, [1]], [yx, [0]]])
    tab.wait_for_function(
        "() => document.querySelector(\".geon-plan[data-plan='rows'] .geon-plan-current\")"
    )
    assert plan_rows(tab) == [["cols", ""], ["rows", "current"]]
    assert tab.text_content(".geon-plans-note") == ('The document has plan "rows"\'s applications.')
    assert tab.evaluate("window.geon.state().issues") == []
    # and the comparison says it was computed on the version before
    assert tab.text_content(".geon-compare-table caption") == (
        f"Computed at version {version}; the graph is now at version {version + 1}: "
        "compare again for the current costs."
    )
    shot("03-switched")

    # when she undoes the switch, "cols"'s applications are back; redoing switches again
    tab.wait_for_function("() => window.geon.state().history.undo.at(-1) === 'switch to plan rows'")
    tab.locator(".geon-canvas").focus()
    tab.keyboard.press("Control+z")
    tab.wait_for_function("(v) => window.geon.state().version === v + 2", arg=version)
    assert app_ranges(tab, "x·y") == cols
    tab.keyboard.press("Control+Shift+z")
    tab.wait_for_function("(v) => window.geon.state().version === v + 3", arg=version)
    assert app_ranges(tab, "x·y") == rows

    # when she asks to delete "rows", and her second device renames "cols" to "columns" before
    # she confirms (her list is drawn again from the server's)
    delete = tab.locator(".geon-plan[data-plan='rows'] .geon-plan-delete")
    delete.click()
    assert delete.text_content() == "Really delete?"
    other.locator(".geon-plan[data-plan='cols'] .geon-plan-rename").click()
    other.fill(".geon-plan-rename-input", "columns")
    other.press(".geon-plan-rename-input", "Enter")
    tab.wait_for_selector(".geon-plan[data-plan='columns']")
    # then the question still stands, on the focused button, and her second click deletes
    assert delete.text_content() == "Really delete?"
    assert delete.evaluate("(b) => b === document.activeElement")
    delete.click()
    tab.wait_for_function("() => !document.querySelector(\".geon-plan[data-plan='rows']\")")
    # then only "columns" is left, and the document keeps its applications
    assert plan_rows(tab) == [["columns", ""]]
    assert app_ranges(tab, "x·y") == rows
    # when she starts renaming "columns", and her second device saves the sharding as "third"
    # while she types
    tab.locator(".geon-plan[data-plan='columns'] .geon-plan-rename").click()
    tab.fill(".geon-plan-rename-input", "cols again")
    save_plan(other, "third")
    tab.wait_for_selector(".geon-plan[data-plan='third']")
    # then what she typed is still there, focused, and Enter renames the plan
    typed = tab.locator(".geon-plan-rename-input")
    assert typed.input_value() == "cols again"
    assert typed.evaluate("(i) => i === document.activeElement")
    tab.keyboard.press("Enter")
    tab.wait_for_selector(".geon-plan[data-plan='cols again']")
    assert plan_rows(tab) == [["cols again", ""], ["third", "current"]]
    # the only failed request is the refused save (the server answers 409 with its envelope);
    # the other tab may ask the cost of "rows" (its current plan, for the canvas' collectives)
    # just before it hears that ann deleted it: that 404 draws nothing, and is left out here
    rows_cost = re.compile(r"page 2: (404 \S+/plans/\d+/cost\?profile=\S+|.*404 \(Not Found\))$")
    errors = [e for e in errors if not rows_cost.match(e)]
    assert errors == [
        f"page 1: 409 {daphne_server}/api/v1/graphs/{graph_id}/plans",
        "page 1: Failed to load resource: the server responded with a status of 409 (Conflict)",
    ]


def test_the_mlp_is_readable_at_fit_to_screen(
    daphne_server: str,
    user: Any,
    password: str,
    gallery: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    scales = {}
    for title, graph_id in gallery.items():
        # when ann opens each example at 1280x800 and fits it to the screen
        open_graph(tab, daphne_server, graph_id)
        tab.evaluate("window.geon.run('zoomToFit')")
        painted(tab)
        scales[title] = round(tab.evaluate("window.geon.state().viewport.scale"), 3)
        if title == "A small MLP":
            screenshots(tab, "plans")("mlp-fit")
            boxes = tab.evaluate("window.geon.boxes()")
            smallest = min(b["h"] for b in boxes)
    print("fit scales:", json.dumps(scales, ensure_ascii=False))
    # then the MLP's boxes are drawn large enough to read their titles
    assert scales["A small MLP"] >= READABLE_SCALE
    assert smallest >= 46 * READABLE_SCALE
    assert errors == []


TOOLBAR_LINES = """() => {
  const bar = document.querySelector('.geon-toolbar');
  const box = bar.getBoundingClientRect();
  // the controls drawn on the bar (not those inside a closed menu: Train's form)
  const controls = [...bar.querySelectorAll('button, input')]
    .filter((c) => c.checkVisibility())
    .map((c) => c.getBoundingClientRect());
  return {
    height: Math.round(box.height),
    // distinct vertical centres of the controls: one line has one
    lines: new Set(controls.map((c) => Math.round(c.top + c.height / 2))).size,
    // every control lies inside the bar (none cut off or scrolled away)
    inside: controls.every((c) => c.left >= box.left && c.right <= box.right),
    overflow: bar.scrollWidth > bar.clientWidth,
  };
}"""


def test_the_toolbar_stays_one_line_after_a_run(
    daphne_server: str,
    celery_worker: Any,
    user: Any,
    password: str,
    graph: Any,
    browsers: Browsers,
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, str(graph.pk))
    # given a busy toolbar: ann has the graph open on a second device too, and searches it
    other = browsers.new_page()
    sign_in(other, daphne_server, "ann", password)
    open_graph(other, daphne_server, str(graph.pk))
    tab.wait_for_function("() => document.querySelectorAll('.geon-person').length === 2")
    tab.fill(".geon-search", "z")
    tab.wait_for_function("() => document.querySelector('.geon-found').textContent !== ''")
    before = tab.evaluate(TOOLBAR_LINES)
    assert (before["lines"], before["inside"], before["overflow"]) == (1, True, False)

    # when ann runs the graph from the keyboard: Tab from the search field reaches Help (the
    # tour, on a first visit), Share (the owner's, beside the people present), then Run
    tab.focus(".geon-search")
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.classList.contains('geon-act-help')")
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.classList.contains('geon-share-button')")
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.classList.contains('geon-run')")
    tab.keyboard.press("Enter")
    tab.wait_for_function("() => window.geon.state().run?.status === 'done'", timeout=60_000)
    tab.wait_for_function("() => document.querySelector('.geon-run-result').textContent !== ''")

    # then the toolbar, with the run's status and outputs in it, is still one line at 1280 px
    after = tab.evaluate(TOOLBAR_LINES)
    assert after == before
    run = tab.evaluate("window.geon.state().run")
    assert tab.locator(".geon-run-status").text_content() == f"run {run['id']}: done"
    # and the outputs, cut to fit, are whole in the tooltip
    result = tab.locator(".geon-run-result")
    assert result.get_attribute("title") == result.text_content()
    assert (result.text_content() or "").startswith("outputs: z 10\u00d75 int32, sum ")
    tab.locator(".geon-toolbar").screenshot(path=str(ARTIFACTS / "plans-toolbar-after-run.png"))
    assert errors == []


def write_plan(tab: Page, name: str, mesh: str, mapping: str) -> None:
    """Name a plan and write it as a mesh and an axis mapping in the Plans panel's form."""
    tab.fill(".geon-plan-name", name)
    tab.click(".geon-plan-by-mapping summary")
    tab.fill(".geon-plan-mesh", mesh)
    tab.fill(".geon-plan-mapping", mapping)
    tab.click(".geon-plan-create")


def test_a_plan_by_axis_mapping_splits_every_operation_with_the_axis(
    daphne_server: str, user: Any, password: str, gallery: dict[str, str], page: Any
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, gallery["Dual-axis dot in 2-D"])
    tab.wait_for_selector(".geon-plans .geon-plan-empty")
    # a mapping to a mesh axis that is not there is refused by name, and nothing is stored
    write_plan(tab, "rows", "dp=2", "H=tp")
    said = tab.text_content(".geon-plans-error") or ""
    assert 'axis "H" is mapped to "tp", which is not a mesh axis' in said, said
    assert tab.locator(".geon-plan").count() == 0
    # when ann maps H over a mesh axis of 2, with x split along H too, and switches to the plan
    tab.fill(".geon-plan-mapping", "H=dp")
    tab.fill(".geon-plan-inputs", "x: H=dp")
    tab.click(".geon-plan-create")
    tab.wait_for_selector(".geon-plan[data-plan='rows']")

    def stored() -> tuple[Any, Any]:
        from geon.graphs.models import ShardPlan

        plan = ShardPlan.objects.get(name="rows")
        return plan.axis_mapping, plan.inputs

    assert off_loop(stored) == ({"H": "dp"}, {"x": {"over": {"H": "dp"}}})
    tab.click(".geon-plan[data-plan='rows'] .geon-plan-switch")
    # then both dots are split in two over dp: four applications
    tab.wait_for_function(
        "() => window.geon.state().document.nodes"
        ".filter((n) => n.type.endsWith('/Application')).length === 4"
    )
    tab.screenshot(path=str(ARTIFACTS / "plan-by-mapping.png"))

    # when ann changes the plan: Edit fills the form with its mesh, mapping and inputs
    tab.click(".geon-plan[data-plan='rows'] .geon-plan-edit")
    assert [tab.input_value(f".geon-plan-{f}") for f in ("name", "mesh", "mapping", "inputs")] == [
        "rows",
        "dp=2",
        "H=dp",
        "x: H=dp",
    ]
    assert tab.text_content(".geon-plan-create") == "Save changes"
    # and she adds a mesh axis tp for N and names it "grid", then switches to it again
    tab.fill(".geon-plan-mesh", "dp=2, tp=2")
    tab.fill(".geon-plan-mapping", "H=dp, N=tp")
    tab.fill(".geon-plan-name", "grid")
    tab.locator(".geon-plans").screenshot(path=str(ARTIFACTS / "plan-edit.png"))
    tab.click(".geon-plan-create")
    tab.wait_for_selector(".geon-plan[data-plan='grid']")
    assert tab.text_content(".geon-plan-create") == "Create plan"
    assert tab.input_value(".geon-plan-mesh") == ""

    def changed() -> tuple[Any, Any, Any]:
        from geon.graphs.models import ShardPlan

        plan = ShardPlan.objects.get(name="grid")
        return ShardPlan.objects.filter(name="rows").exists(), plan.mesh["axes"], plan.axis_mapping

    # the same plan, changed: no "rows" is left
    assert off_loop(changed) == (False, {"dp": 2, "tp": 2}, {"H": "dp", "N": "tp"})
    tab.click(".geon-plan[data-plan='grid'] .geon-plan-switch")
    # then both dots are split in four, over H and N: eight applications
    tab.wait_for_function(
        "() => window.geon.state().document.nodes"
        ".filter((n) => n.type.endsWith('/Application')).length === 8"
    )
    assert errors == []


def test_a_plan_of_more_applications_than_an_edit_may_carry_is_switched_to(
    daphne_server: str, user: Any, password: str, page: Any
) -> None:
    from geon import core as gc
    from geon.graphs.services import do_create_graph

    # given 150 additions in a chain: split 8 ways, 1,200 Applications (1,350 node ops, past
    # the 1,000 an edit from the editor may carry)
    N, D = gc.Axis("N", 16), gc.Axis("D", 4)
    t = gc.placeholder(axes=[N, D], name="t0")
    for n in range(1, 151):
        t = gc.add(t, gc.placeholder(axes=[N, D], name=f"w{n}"), name=f"t{n}")
    document = gc.graph([t]).to_json()
    graph = off_loop(lambda: do_create_graph(owner=user, title="chain", document=document))
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, str(graph.pk))
    tab.wait_for_selector(".geon-plans .geon-plan-empty")
    # when ann writes a plan mapping N over 8 devices and switches to it
    write_plan(tab, "rows", "d=8", "N=d")
    tab.click(".geon-plan[data-plan='rows'] .geon-plan-switch")
    # then the document holds it, checked clean; too large for one edit to take it back, it is
    # not offered as an undo step, and the editor says so
    tab.wait_for_selector(".geon-plan[data-plan='rows'] .geon-plan-current", timeout=30_000)
    state = tab.evaluate("window.geon.state()")
    apps = [n for n in state["document"]["nodes"] if n["type"].endswith("/Application")]
    assert (state["version"], len(apps), state["issueCounts"]) == (
        2,
        1200,
        {"error": 0, "warning": 0},
    )
    assert state["history"]["undo"] == []
    toast = tab.text_content(".geon-toast") or ""
    said = '"switch to plan rows" cannot be undone here: its 1201 changes are more than one edit'
    assert toast == f"{said} may make", toast
    assert tab.text_content(".geon-plans-error") == ""
    tab.screenshot(path=str(ARTIFACTS / "plans-big-switched.png"))
    assert errors == []
