"""The browser harness itself (tests/browser.py): pages run their script, and what fails a test is caught."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser import SCREENSHOTS, ReportOpener, assert_no_problems

if TYPE_CHECKING:
    from playwright.sync_api import Browser

SCRIPTED = """<!doctype html>
<html><head><meta charset="utf-8"><title>harness</title></head>
<body><h1>Report</h1><ul id="cases"></ul>
<script>
  const names = ['alpha', 'beta', 'gamma'];
  for (const name of names) {
    const li = document.createElement('li');
    li.textContent = name + ': passed';
    document.getElementById('cases').append(li);
  }
  document.body.dataset.ready = 'yes';
</script></body></html>
"""


def test_a_page_runs_its_script_and_is_screenshotted(open_report: ReportOpener, tmp_path: Path) -> None:
    path = tmp_path / 'report.html'
    path.write_text(SCRIPTED, encoding='utf-8')
    page = open_report(path)
    assert page.locator('#cases li').all_inner_texts() == ['alpha: passed', 'beta: passed', 'gamma: passed']
    assert page.get_attribute('body', 'data-ready') == 'yes'
    assert open_report.problems() == []
    assert [c.type for c in open_report.console()] == []
    extra = open_report.screenshot('cases')
    assert extra == SCREENSHOTS / f'{open_report.name}-cases.png'
    assert extra.read_bytes().startswith(b'\x89PNG')


def test_console_errors_and_page_errors_fail_the_test(
    open_report: ReportOpener, chromium_browser: Browser, tmp_path: Path
) -> None:
    # The fixture's own check at teardown, run on a separate opener so that this test passes.
    opener = ReportOpener(chromium_browser, f'{open_report.name}-provoked', html_dir=tmp_path)
    try:
        opener.html(
            '<p>hi</p><script>console.log("fine"); console.error("x");'
            ' setTimeout(() => { throw new TypeError("boom") }, 0)</script>'
        )
        opener.page.wait_for_function('() => true')
        opener.page.wait_for_timeout(50)
        assert [(c.type, c.text) for c in opener.console()] == [('log', 'fine'), ('error', 'x')]
    finally:
        problems = opener.close()
    assert len(problems) == 2, problems
    assert problems[0].startswith('console error: x (file://') and problems[0].endswith('.html:1)')
    assert problems[1].startswith('page error: TypeError: boom')
    with pytest.raises(pytest.fail.Exception, match=r'recorded 2 problem\(s\):\n  console error: x'):
        assert_no_problems(problems)
    assert_no_problems([])
    # A problem taken by the test itself does not fail it at teardown.
    open_report.html('<script>console.error("expected")</script>')
    assert [p.split(' (')[0] for p in open_report.take_problems()] == ['console error: expected']
    assert open_report.problems() == []


def test_network_requests_are_blocked_and_recorded(open_report: ReportOpener) -> None:
    page = open_report.html(
        '<img id="remote" src="https://example.com/x.png">'
        '<img id="inline" src="data:image/gif;base64,R0lGODlhAQABAAAAACwAAAAAAQABAAA=">'
        '<script>new WebSocket("wss://example.com/socket")</script>'
    )
    page.wait_for_timeout(100)
    assert page.evaluate('document.getElementById("remote").naturalWidth') == 0
    assert page.evaluate('document.getElementById("inline").naturalWidth') == 1
    problems = open_report.take_problems()
    assert 'network request: GET https://example.com/x.png' in problems
    assert 'network request: WebSocket wss://example.com/socket' in problems
    # The aborted loads show up in the console too; every one is a problem at teardown.
    assert all(p.startswith(('network request: ', 'console error: ')) for p in problems), problems
    assert open_report.network_requests == []


def test_browser_tests_are_marked_browser_and_slow(request: pytest.FixtureRequest, open_report: ReportOpener) -> None:
    assert {m.name for m in request.node.iter_markers()} >= {'browser', 'slow'}


def test_asyncio_runs_after_a_browser_test() -> None:
    # Playwright's sync API leaves its loop set as the running loop; the fixtures unset it between tests.
    assert asyncio.run(asyncio.sleep(0, 'ran')) == 'ran'


async def test_async_tests_run_after_a_browser_test() -> None:
    assert await asyncio.sleep(0, 'ran') == 'ran'
