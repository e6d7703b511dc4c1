"""The projection window in the browser, as a new user would use it: select the dot, open its
index space, shard it and pick an application to see what each input and output selects, click a
cell for one index point, undo and redo the shard; see the conv2d example's halo bands; edit a
custom kernel's offset, watch the region move, have a bad value refused, apply and undo."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.core.graph import (
    AXIS,
    INDEX_AXES,
    IPF_INDEX,
    IPF_SIGNATURE,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
)
from tests.browser.helpers import open_graph, screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _range(start: list[int], end: list[int]) -> dict[str, list[int]]:
    return {"start": start, "end": end}


def _ipf(offset: list[int], shape: list[int]) -> dict[str, Any]:
    return {"affineMap": {"projection": [[1, 0], [0, 1]], "offset": offset}, "shape": shape}


def blur_document() -> dict[str, Any]:
    """A custom 3x3 window kernel (not in the catalogue): blurred[P, Q] reads
    image[P:P+3, Q:Q+3]."""
    ids = [f"00000000-0000-4000-8000-0000000000{k:02d}" for k in range(8)]
    axes = [("P", 6), ("Q", 6), ("Y", 8), ("X", 8)]
    return {
        "id": ids[0],
        "nodes": [
            *(
                {"id": ids[1 + i], "type": AXIS, "body": {"name": n, "length": k}}
                for i, (n, k) in enumerate(axes)
            ),
            {
                "id": ids[5],
                "type": TENSOR,
                "label": "image",
                "body": {"dtype": "float32", "range": _range([0, 0], [8, 8])},
                "tags": {TENSOR_AXES: {"axes": ["Y", "X"]}},
            },
            {
                "id": ids[6],
                "type": TENSOR,
                "label": "blurred",
                "body": {"dtype": "float32", "range": _range([0, 0], [6, 6])},
                "tags": {TENSOR_AXES: {"axes": ["P", "Q"]}},
            },
            {
                "id": ids[7],
                "type": OPERATION,
                "label": "blur",
                "body": {
                    "kernel": "custom:blur3x3",
                    "inputs": {"x": [{"tensorId": ids[5], "range": _range([0, 0], [8, 8])}]},
                    "outputs": {"result": [{"tensorId": ids[6], "range": _range([0, 0], [6, 6])}]},
                },
                "tags": {
                    INDEX_AXES: {"axes": ["P", "Q"]},
                    IPF_INDEX: _range([0, 0], [6, 6]),
                    IPF_SIGNATURE: {
                        "inputs": {"x": [_ipf([0, 0], [3, 3])]},
                        "outputs": {"result": [_ipf([0, 0], [1, 1])]},
                    },
                },
            },
        ],
    }


@pytest.fixture
def graphs(user: Any, gallery: dict[str, str]) -> dict[str, str]:
    """ann's copies of the gallery and her custom blur graph: title -> graph id."""
    from geon.graphs.services import do_create_graph

    blur = do_create_graph(owner=user, title="custom blur", document=blur_document())
    return {**gallery, "custom blur": str(blur.pk)}


def open_projection(tab: Page, title: str) -> None:
    """Click the operation's box, then the inspector's "Index space & projections"."""
    tab.evaluate("window.geon.run('zoomToFit')")
    box = next(b for b in tab.evaluate("window.geon.boxes()") if b["title"] == title)
    canvas = tab.locator(".geon-canvas").bounding_box()
    assert canvas is not None
    tab.mouse.click(canvas["x"] + box["x"] + box["w"] / 2, canvas["y"] + box["y"] + box["h"] / 2)
    tab.click(".geon-open-projection")
    tab.wait_for_selector(".geon-projection:not([hidden]) .geon-ipf-grid")
    # the window is docked beside the canvas, which makes room and keeps the operation in view
    tab.wait_for_function(
        """(title) => {
          const canvas = document.querySelector(".geon-canvas");
          const window_ = document.querySelector(".geon-projection").getBoundingClientRect();
          const chosen = window.geon.state().selected[0];
          const op = window.geon.boxes().find((b) => b.title === title && b.id === chosen);
          const docked = canvas.getBoundingClientRect().right <= window_.left + 1;
          return docked && op && op.x >= 0 && op.x + op.w <= canvas.clientWidth;
        }""",
        arg=title,
    )


def regions(tab: Page) -> dict[str, str]:
    """What each input and output selects, by ``side.port.position``."""
    return dict(
        tab.eval_on_selector_all(
            ".geon-ipf-port", "(fs) => fs.map((f) => [f.dataset.key, f.dataset.region])"
        )
    )


def pixel(tab: Page, selector: str, x: float, y: float) -> list[int]:
    """The RGB of a canvas's pixel at (x, y) CSS pixels (the pages run at device scale 1)."""
    return list(
        tab.eval_on_selector(
            selector,
            "(c, [x, y]) => Array.from("
            "c.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3))",
            [x, y],
        )
    )


def version(tab: Page) -> int:
    return int(tab.evaluate("window.geon.state().version"))


def applications(tab: Page) -> int:
    return int(
        tab.evaluate(
            "window.geon.state().document.nodes"
            ".filter((n) => n.type.endsWith('/Application')).length"
        )
    )


def test_the_dot_index_space_its_applications_regions_and_an_undone_shard(
    daphne_server: str,
    user: Any,
    password: str,
    graphs: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "projection")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, graphs["Dual-axis dot in 2-D"])

    # when ann selects the first dot and opens its index space
    open_projection(tab, "op:dot")

    # then the grid is labelled with the index axes (H rows, N columns) and the first index
    # point's regions are shown: x reads row 0, y reads column 0, the output writes one cell
    assert tab.locator(".geon-ipf-row-axis").first.text_content() == "H 0…1"
    assert tab.locator(".geon-ipf-col-axis").first.text_content() == "N 0…3"
    assert regions(tab) == {
        "inputs.x.0": "[0:1, 0:3]",
        "inputs.y.0": "[0:3, 0:1]",
        "outputs.result.0": "[0:1, 0:1]",
    }

    # when she clicks the cell H=1, N=2 of the grid
    grid = tab.locator(".geon-ipf-grid").bounding_box()
    assert grid is not None
    cell = grid["width"] / 4
    tab.mouse.click(grid["x"] + 2.5 * cell, grid["y"] + 1.5 * cell)

    # then the regions follow that index point
    assert tab.locator(".geon-ipf-picked").text_content() == "point (H, N) = [1, 2]"
    assert regions(tab) == {
        "inputs.x.0": "[1:2, 0:3]",
        "inputs.y.0": "[0:3, 2:3]",
        "outputs.result.0": "[1:2, 2:3]",
    }
    shot("01-dot-point")

    # when she shards the dot along H into 2 with the shards panel
    before = version(tab)
    tab.select_option(".geon-shard-axis", "H")
    tab.select_option(".geon-shard-mode", "parts")
    tab.fill(".geon-shard-amount", "2")
    tab.click(".geon-shard-apply")
    tab.wait_for_function("(v) => window.geon.state().version === v + 1", arg=before)
    tab.wait_for_function("() => window.geon.state().history.undo.at(-1) === 'shard'")

    # and picks the second application in the window
    tab.select_option(".geon-ipf-pick", label="application 2 [1:2, 0:4]")

    # then x's second row, all of y and the output's second row are its regions, and the
    # output bands of the two applications do not overlap
    assert regions(tab) == {
        "inputs.x.0": "[1:2, 0:3]",
        "inputs.y.0": "[0:3, 0:4]",
        "outputs.result.0": "[1:2, 0:4]",
    }
    out = tab.locator(".geon-ipf-port[data-key='outputs.result.0']")
    assert out.get_attribute("data-bands") == "[0:1, 0:4] [1:2, 0:4]"
    assert out.get_attribute("data-overlaps") == ""
    shot("02-dot-application")

    # when she undoes, the shard is taken back (the window's picker loses its applications)
    tab.locator(".geon-canvas").focus()
    tab.keyboard.press("Control+z")
    tab.wait_for_function("(v) => window.geon.state().version === v + 2", arg=before)
    assert applications(tab) == 0
    # (the window redraws on the next frame after the state changes)
    tab.wait_for_function("() => document.querySelectorAll('.geon-ipf-pick option').length === 1")
    assert tab.locator(".geon-ipf-pick option").all_text_contents() == [
        "an index point (click a cell)"
    ]

    # and redoing brings both applications back
    tab.keyboard.press("Control+Shift+z")
    tab.wait_for_function("(v) => window.geon.state().version === v + 3", arg=before)
    assert applications(tab) == 2
    assert tab.evaluate("window.geon.state().issues") == []
    assert errors == []


def test_conv2d_halo_bands_overlap(
    daphne_server: str,
    user: Any,
    password: str,
    graphs: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, graphs["conv2d sharded over height, with halos"])

    # when ann opens the convolution's index space (it is already cut in two over P)
    open_projection(tab, "op:conv2d")

    # then the first application is shown, and the images' two bands overlap by the halo rows;
    # its window reaches past the image's top edge (padding), so the footprint is clipped
    images = tab.locator(".geon-ipf-port[data-key='inputs.x.0']")
    assert images.get_attribute("data-raw") == "[0:2, -1:5, -1:9, 0:2]"
    assert images.get_attribute("data-region") == "[0:2, 0:5, 0:8, 0:2]"
    assert images.get_attribute("data-bands") == "[0:2, 0:5, 0:8, 0:2] [0:2, 3:8, 0:8, 0:2]"
    assert images.get_attribute("data-overlaps") == "[0:2, 3:5, 0:8, 0:2]"
    assert tab.locator(".geon-ipf-port.halo").count() == 1
    # the filter is read whole by both applications: the same region, not a halo
    caption = tab.locator(".geon-ipf-port[data-key='inputs.filter.0'] .geon-ipf-caption")
    assert caption.text_content() == (
        "input filter: filter (C-1, R, S, K) reads [0:2, 0:3, 0:3, 0:4] "
        "· the same for every application"
    )
    # the index space has four dims: two shown (K, P), Q and N held at a coordinate
    assert tab.locator(".geon-ipf-dim option").all_text_contents() == ["K", "P", "Q", "N"] * 2
    tab.select_option(".geon-ipf-dim-rows", "P")
    tab.select_option(".geon-ipf-dim-cols", "Q")
    assert tab.locator(".geon-ipf-row-axis").first.text_content() == "P 0…7"
    images.scroll_into_view_if_needed()
    screenshots(tab, "projection")("03-conv-halo")
    assert errors == []


def test_edit_a_custom_kernel_offset_live_apply_and_undo(
    daphne_server: str,
    user: Any,
    password: str,
    graphs: dict[str, str],
    page: tuple[Page, list[str]],
) -> None:
    tab, errors = page
    shot = screenshots(tab, "projection")
    sign_in(tab, daphne_server, "ann", password)
    open_graph(tab, daphne_server, graphs["custom blur"])
    open_projection(tab, "blur: custom:blur3x3")
    assert tab.locator(".geon-predicted").text_content() == (
        "custom kernel: its IPFSignature says what it reads and writes (Index space & projections)"
    )
    image = tab.locator(".geon-ipf-port[data-key='inputs.x.0']")
    assert image.get_attribute("data-region") == "[0:3, 0:3]"

    # when ann types offset 2 for the image's first row, the region moves before anything is sent
    offset = image.locator(".geon-ipf-offset").first
    offset.fill("2")
    assert image.get_attribute("data-region") == "[2:5, 0:3]"
    assert version(tab) == 1
    # and the map draws it there: 16-pixel cells, row 3 is inside the region, row 0 is not
    image_map = ".geon-ipf-port[data-key='inputs.x.0'] .geon-ipf-map"
    inside = pixel(tab, image_map, 24, 3.5 * 16)
    outside = pixel(tab, image_map, 24, 0.5 * 16)
    assert inside[2] - inside[0] > 80, inside  # the pick's blue
    assert min(outside) > 230, outside  # the tensor's pale ground
    shot("04-custom-live")

    # when she types a value that is not an integer, it is refused by name and nothing changes
    offset.fill("1.5")
    tab.click(".geon-ipf-commit")
    message = tab.locator(".geon-ipf-error").text_content()
    assert message == (
        'refused: offset 0 of image (input x) is "1.5"; expected an integer; nothing was changed'
    )
    assert offset.get_attribute("aria-invalid") == "true"
    assert image.get_attribute("data-region") == "[2:5, 0:3]"
    assert version(tab) == 1
    shot("05-custom-refused")

    # when she sets 2 again and applies, the server stores the signature and finds no issue
    offset.fill("2")
    tab.click(".geon-ipf-commit")
    tab.wait_for_function("() => window.geon.state().version === 2")
    signature = tab.evaluate(
        "(key) => window.geon.state().document.nodes.find((n) => n.label === 'blur').tags[key]",
        IPF_SIGNATURE,
    )
    assert signature["inputs"]["x"][0]["affineMap"]["offset"] == [2, 0]
    assert tab.evaluate("window.geon.state().issues") == []
    assert image.get_attribute("data-region") == "[2:5, 0:3]"
    shot("06-custom-applied")

    # when she undoes, the offset and the region are back where they were
    tab.locator(".geon-canvas").focus()
    tab.keyboard.press("Control+z")
    tab.wait_for_function("() => window.geon.state().version === 3")
    assert image.get_attribute("data-region") == "[0:3, 0:3]"
    assert image.locator(".geon-ipf-offset").first.input_value() == "0"
    assert errors == []
