"""The Content-Security-Policy in a real browser (issue 13 finding 12): the editor works under it
(its bundle, the layout worker, the canvas, the websocket) with no violation reported, while an
inline script injected into the page is refused."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import sign_in

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


def test_the_api_docs_page_is_clear_under_the_policy(
    daphne_server: str, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    tab.add_init_script(RECORD_VIOLATIONS)
    tab.route("https://cdn.jsdelivr.net/**", lambda route: route.abort())  # no network here
    tab.goto(f"{daphne_server}/api/v1/docs")
    # the docs page's own scripts load; only the unreachable CDN fails, and the page says where
    # the OpenAPI document is
    assert tab.evaluate("window.__violations") == []
    assert tab.text_content("#swagger-ui h1") == "geon API"
    assert tab.get_attribute("#swagger-ui a", "href") == "/api/v1/openapi.json"
    assert {error.split(": ", 1)[1] for error in errors} <= {
        "Failed to load resource: net::ERR_FAILED"
    }
