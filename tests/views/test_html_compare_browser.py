"""The comparison page in a real chromium (tests/browser.py): what a reviewer sees, clicks and filters.

Every test fails at teardown on a console error, a page error or a network request, and leaves a
screenshot in test-artifacts/screenshots/.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from playwright.sync_api import expect

from agentic_evals.reports.compare import Comparison, compare_documents
from agentic_evals.reports.document import RequestSpan
from agentic_evals.views.html_compare import render_comparison_html

from .test_html_compare import (
    HOSTILE,
    big_comparison,
    hostile_comparison,
    mixed_comparison,
    support_comparison,
    token_runs,
)

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from tests.browser import ReportOpener


def _open(open_report: ReportOpener, tmp_path: Path, comparison: Comparison, name: str = 'compare.html') -> Page:
    path = tmp_path / name
    path.write_text(render_comparison_html(comparison), encoding='utf-8')
    page = open_report(path)
    page.wait_for_selector('body[data-ready="true"]')
    return page


def _case_names(page: Page) -> list[str]:
    return page.locator('#case-list > li').evaluate_all('items => items.map(li => li.dataset.case)')


def _visible_averages(page: Page) -> list[str]:
    return page.locator('#averages tbody tr:not([hidden]) td.cmp-result-name').all_inner_texts()


def _open_case(page: Page, name: str) -> Locator:
    item = page.locator('#case-list > li').filter(has=page.locator('.cmp-case-name', has_text=name)).first
    item.locator('summary').click()
    item.locator('.cmp-case-body > *').first.wait_for()  # drawn on the `toggle` event, which comes after the click
    return item


def _search(page: Page, text: str) -> list[str]:
    """Type into the search box and wait for the (debounced) list to follow; the names shown."""
    page.fill('#search', text)
    page.wait_for_function('(query) => document.getElementById("case-list").dataset.query === query', arg=text.lower())
    return _case_names(page)


def test_compare_page_verdict_and_regressions_first(open_report: ReportOpener, tmp_path: Path) -> None:
    comparison = support_comparison()
    page = _open(open_report, tmp_path, comparison)
    assert page.inner_text('#verdict .badge') == '✗ REGRESSION' or 'REGRESSION' in page.inner_text('#verdict .badge')
    assert page.inner_text('#verdict-summary') == comparison.summary
    assert 'tolerance 0.000' in page.inner_text('#verdict-counts')
    rows = page.locator('#averages tbody tr')
    statuses = rows.evaluate_all('rows => rows.map(r => r.dataset.status)')
    assert statuses == ['regressed'] * 5 + ['same'] * 6
    first = rows.first.locator('td').all_inner_texts()
    assert first[:6] == ['TrajectoryMatch', 'score', 'TrajectoryMatch', '1.000', '0.556', '-0.444']
    assert 'regressed' in first[6]
    # Every case of the regressed run got worse; each says which results moved, worse ones marked.
    assert _case_names(page) == ['refund', 'order_status', 'shipping_faq', 'damaged_escalation']
    chips = page.locator('#case-list > li').first.locator('.cmp-chip')
    assert chips.all_inner_texts() == ['ArgumentCorrectness: pass → FAIL', 'support_trajectory: 1.000 → 0.800']
    assert chips.evaluate_all('cs => cs.every(c => c.classList.contains("cmp-worse"))')
    assert page.inner_text('#case-count') == '4 of 4 cases'


def test_compare_page_refund_side_by_side(open_report: ReportOpener, tmp_path: Path) -> None:
    page = _open(open_report, tmp_path, support_comparison())
    # Details are drawn on opening, not before.
    assert page.locator('.cmp-case-body > *').count() == 0
    refund = _open_case(page, 'refund')
    results = refund.locator('.cmp-results tr[data-result="ArgumentCorrectness"] td').all_inner_texts()
    assert results[2].startswith('✓ pass') or results[2].startswith('pass')
    assert 'FAIL' in results[3] and "key 'amount': expected 25.0, got 250.0" in results[3]
    assert refund.locator('.cmp-case-body').count() == 1
    assert page.locator('.cmp-case-body > *').count() > 0  # only the refund case's
    rows = refund.locator('.cmp-call-grid .cmp-call-row:not(.cmp-call-head)')
    pairs = rows.evaluate_all(
        'rows => rows.map(r => [r.dataset.pair, ...[...r.children].map(c => c.dataset.tool || "")])'
    )
    assert pairs == [
        ['same', 'lookup_order', 'lookup_order'],
        ['removed', 'check_refund_policy', ''],  # the candidate skipped the policy check
        ['changed', 'ask_billing', 'ask_billing'],
        ['same', 'get_payment', 'get_payment'],
        ['changed', 'issue_refund', 'issue_refund'],
    ]
    assert rows.nth(1).locator('.cmp-call-none').inner_text() == 'no matching call'
    baseline_refund, candidate_refund = (rows.nth(4).locator('.cmp-call').nth(i) for i in (0, 1))
    assert baseline_refund.locator('.badge').first.inner_text().endswith('ok')
    assert 'support › billing' in candidate_refund.inner_text()
    # The amount differs between the runs (25 against 250), and from what the dataset expects.
    amount = candidate_refund.locator('tr[data-key="amount"]')
    assert amount.locator('td.mono').inner_text() == '250.0'
    assert baseline_refund.locator('tr[data-key="amount"] td.mono').inner_text() == '25.0'
    assert amount.get_attribute('class') == 'cmp-arg-differs cmp-arg-wrong'
    assert 'expected differs' in amount.inner_text()
    assert baseline_refund.locator('tr[data-key="amount"]').get_attribute('class') == 'cmp-arg-differs'
    assert candidate_refund.locator('tr[data-key="order_id"]').get_attribute('class') is None
    # Each run's expected calls against its actual ones, side by side.
    candidate_rows = refund.locator('.cmp-alignment-rows[data-side="candidate"]')
    trajectory, arguments = candidate_rows.nth(0), candidate_rows.nth(1)
    assert trajectory.locator('tbody tr').evaluate_all('rs => rs.map(r => r.dataset.status)') == [
        'matched',
        'missing',
        'matched',
    ]
    assert 'check_refund_policy' in trajectory.locator('tr[data-status="missing"]').inner_text()
    mismatch = arguments.locator('tr[data-status="mismatch"]')
    assert "issue_refund(amount=250.0, order_id='A100')" in mismatch.inner_text()
    assert mismatch.locator('.cmp-key').all_inner_texts() == ['amount']
    baseline_rows = refund.locator('.cmp-alignment-rows[data-side="baseline"] tbody tr')
    assert set(baseline_rows.evaluate_all('rs => rs.map(r => r.dataset.status)')) == {'matched'}
    assert refund.locator('.cmp-metrics').inner_text().count('\n') >= 3
    refund.scroll_into_view_if_needed()
    open_report.screenshot('refund')


def test_compare_page_filters_and_search(open_report: ReportOpener, tmp_path: Path) -> None:
    page = _open(open_report, tmp_path, mixed_comparison())
    everything = ['alpha', 'delta', 'zeta', 'eta', 'beta', 'epsilon', 'gamma']
    assert _case_names(page) == everything
    states = page.locator('#case-list .cmp-case-state').all_inner_texts()
    assert states == ['removed', 'failed to run', 'added']
    page.check('#regressions-only')
    assert _case_names(page) == ['alpha', 'delta', 'zeta', 'eta']
    assert _visible_averages(page) == ['ToolCorrectness', '(fail rate)']
    page.select_option('#evaluator', 'TrajectoryMatch')
    assert _case_names(page) == ['zeta']  # the only one worse with a TrajectoryMatch result: it no longer runs
    assert page.locator('#averages .cmp-empty').is_visible()  # TrajectoryMatch's average did not regress
    page.uncheck('#regressions-only')
    assert _case_names(page) == ['alpha', 'zeta', 'beta', 'gamma']
    assert _visible_averages(page) == ['TrajectoryMatch']
    page.check('#changed-only')
    assert _case_names(page) == ['zeta', 'beta']  # alpha's TrajectoryMatch did not change
    page.select_option('#evaluator', '')
    assert _case_names(page) == ['alpha', 'delta', 'zeta', 'eta', 'beta', 'epsilon']
    page.uncheck('#changed-only')
    assert _search(page, 'GAM') == ['gamma']
    assert page.inner_text('#case-count') == '1 of 7 cases'
    assert _search(page, 'no such case') == []
    assert page.locator('#cases .cmp-empty').is_visible()
    assert _search(page, '') == everything
    # An unchanged case opens to its results alone; a failed run shows its error.
    gamma = _open_case(page, 'gamma')
    assert 'Nothing changed in this case' in gamma.inner_text()
    zeta = _open_case(page, 'zeta')
    assert 'no trace found for the case' in zeta.locator('.cmp-error').inner_text()
    assert zeta.locator('.cmp-calls').inner_text().endswith('No timeline was recorded in either run.')


def test_compare_page_hostile_text_runs_nothing(open_report: ReportOpener, tmp_path: Path) -> None:
    page = open_report.new_page()
    dialogs: list[str] = []
    page.on('dialog', lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    path = tmp_path / 'hostile.html'
    path.write_text(render_comparison_html(hostile_comparison()), encoding='utf-8')
    page.goto(path.as_uri())
    page.wait_for_selector('body[data-ready="true"]')
    assert page.title().startswith('agentic-evals compare: </script><img')
    names = page.locator('#case-list .cmp-case-name').all_inner_texts()
    assert names == [HOSTILE, f'{HOSTILE}-gone', f'{HOSTILE}-new']
    for item in page.locator('#case-list > li summary').all():
        item.click()
    body = page.inner_text('#case-list')
    assert body.count(HOSTILE) >= 10  # names, reasons, tools, arguments, agents, alignments, all as text
    assert '\\x1b]0;title\\x07\\u202e' in body  # terminal controls and a bidi override, escaped
    assert page.locator('img').count() == 0
    # No control or bidi character reached the page as itself, not even one JSON-escaped in the arguments.
    hidden = r'/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/'
    assert page.evaluate(f'() => {hidden}.test(document.body.textContent)') is False
    assert '\\u202e' in page.locator('tr[data-key="note"]').first.inner_text()
    assert page.locator('#case-list script').count() == 0
    assert dialogs == []
    assert page.evaluate('document.querySelectorAll("script").length') == 2


def test_compare_page_ten_thousand_cases(open_report: ReportOpener, tmp_path: Path) -> None:
    path = tmp_path / 'big.html'
    path.write_text(render_comparison_html(big_comparison()), encoding='utf-8')
    started = time.perf_counter()
    page = open_report(path)
    page.wait_for_selector('body[data-ready="true"]')
    ready = time.perf_counter() - started
    assert ready < 10, ready
    drawn = page.locator('#case-list > li').count()
    assert 0 < drawn <= 300, drawn  # a batch or a few, not 10,000
    assert page.inner_text('#case-count') == '10,000 of 10,000 cases'
    assert _case_names(page)[:2] == ['case-00099', 'case-00199']  # the 100 worse cases first
    assert page.locator('.cmp-case-body > *').count() == 0
    more = page.locator('#case-list + button.more')
    expect(more).to_be_visible()
    page.check('#regressions-only')
    assert page.inner_text('#case-count') == '100 of 10,000 cases'
    assert page.locator('#case-list > li').count() == 100
    expect(more).to_be_hidden()  # the whole list is drawn: no "Show more (0 more)" (base.css's [hidden] rule)
    page.uncheck('#regressions-only')
    started = time.perf_counter()
    assert _search(page, 'case-09998') == ['case-09998']
    assert time.perf_counter() - started < 5
    unchanged = _open_case(page, 'case-09998')
    assert 'Nothing changed' in unchanged.inner_text()
    assert _search(page, 'case-09999') == ['case-09999']
    worse = _open_case(page, 'case-09999')
    assert worse.locator('.cmp-call-grid .cmp-call-row[data-pair="same"]').count() == 4
    _search(page, '')
    assert page.inner_text('#case-count') == '10,000 of 10,000 cases'
    page.locator('#case-list button.more, #cases button.more').first.click()
    assert page.locator('#case-list > li').count() > drawn


def test_compare_page_tokens_and_failed_calls(open_report: ReportOpener, tmp_path: Path) -> None:
    """No token figure for a run whose trace recorded none; a failed call stands out in its run."""
    before, after = token_runs()
    page = _open(open_report, tmp_path, compare_documents(before, after))
    case = _open_case(page, 'a')
    summaries = case.locator('.cmp-requests-summary').all_inner_texts()
    assert summaries == [
        '2 model requests (m): 5 input and 1 output tokens',  # every request recorded usage: 0 is a real zero
        '2 model requests (m): 5 input and 1 output tokens (1 without token counts)',
    ]
    failed = case.locator('.cmp-call[data-status="failed"]')
    assert failed.count() == 1
    assert failed.evaluate('(e) => getComputedStyle(e).borderTopColor') != case.locator(
        '.cmp-call[data-status="ok"]'
    ).first.evaluate('(e) => getComputedStyle(e).borderTopColor')
    # a run whose trace recorded no tokens at all says so, with no figure
    before, after = token_runs()
    (candidate,) = after.cases
    assert candidate.timeline is not None and candidate.account is not None
    candidate.timeline.requests = [RequestSpan('m', ['agent'], 0.0, 1.0), RequestSpan('m', ['agent'], 1.0, 2.0)]
    candidate.account = replace(candidate.account, with_tokens=0)
    page = _open(open_report, tmp_path, compare_documents(before, after), 'no-tokens.html')
    summaries = _open_case(page, 'a').locator('.cmp-requests-summary').all_inner_texts()
    assert summaries[1] == '2 model requests (m): tokens not recorded'
