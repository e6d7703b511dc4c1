"""The Content-Security-Policy in a real browser (issue 13 finding 12): the editor works under it
(its bundle, the layout worker, the canvas, the websocket) with no violation reported, while an
inline script injected into the page is refused."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import ARTIFACTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Runs before any page script (Playwright injects it outside the page's CSP): records every
# violation the page reports.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`);
});
"""
INJECT_INLINE_SCRIPT = """() => {
  const script = document.createElement("script");
  script.textContent = "window.__inlineRan = true;";
  document.body.append(script);
  return new Promise((done) => setTimeout(() => done(window.__inlineRan === true), 200));
}"""


def test_the_editor_works_under_the_policy_and_inline_script_is_refused(
    daphne_server: str, user: Any, password: str, graph: Any, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    workers: list[str] = []
    tab.on("worker", lambda worker: workers.append(worker.url))
    tab.add_init_script(RECORD_VIOLATIONS)
    # given ann signed in
    sign_in(tab, daphne_server, "ann", password)
    # when she opens the loom example, whose nodes have no stored positions (the layout worker
    # places them)
    answer = tab.goto(f"{daphne_server}/graphs/{graph.pk}/")
    tab.wait_for_function(
        "() => window.geon && window.geon.state().version === 1 && window.geon.boxes().length === 4"
    )
    # then the page was served under the policy, the worker ran and the socket is open
    assert answer is not None
    assert "script-src 'self';" in answer.headers["content-security-policy"]
    assert [url.rsplit("/", 1)[-1].split("-")[0] for url in workers] == ["layout.worker"]
    assert tab.evaluate("window.geon.state().connection") == "open"
    # and nothing was refused, nothing failed
    assert tab.evaluate("window.__violations") == []
    assert errors == []
    # when a script is injected inline (as an XSS would)
    ran = tab.evaluate(INJECT_INLINE_SCRIPT)
    # then the browser refuses it and reports the violation
    assert ran is False
    assert tab.evaluate("window.__violations") == ["script-src-elem inline"]


def test_the_api_docs_page_renders_swagger_ui_from_this_site(
    daphne_server: str, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    tab.add_init_script(RECORD_VIOLATIONS)
    requested: list[str] = []
    tab.on("request", lambda request: requested.append(request.url))
    tab.goto(f"{daphne_server}/api/v1/docs")
    # Swagger UI, served from this site's static files, renders the OpenAPI document's endpoints
    tab.wait_for_selector("#swagger-ui .opblock-summary-path", timeout=15_000)
    paths = tab.eval_on_selector_all(
        "#swagger-ui .opblock-summary-path", "nodes => nodes.map(n => n.dataset.path)"
    )
    assert "/api/v1/validate" in paths
    tab.screenshot(path=str(ARTIFACTS / "api-docs.png"))
    # with nothing fetched from elsewhere, no policy violation and no console error
    assert [url for url in requested if not url.startswith(daphne_server)] == []
    assert tab.evaluate("window.__violations") == []
    assert errors == []
