"""The HTML report in a real browser (Debian's chromium, tests/browser.py): what a person sees and does.

Reports are made by the real command line on the real fixtures (the support agent's regressed run,
the pydantic-ai scenario), opened from disk; the harness fails a test on any console error, page
error or network request, and saves a screenshot of each page in test-artifacts/screenshots/.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from agentic_evals.cli import main
from agentic_evals.reports.document import (
    AgentSpan,
    AlignedCall,
    Alignment,
    AssertionResult,
    CallSpan,
    CaseResult,
    ReportDocument,
    RequestSpan,
    ScoreResult,
    Timeline,
)
from agentic_evals.reports.gates import Gates
from agentic_evals.reports.judge import check_gates
from agentic_evals.trajectory.account import TraceAccount
from agentic_evals.views.html import (
    FIRST_ROWS,
    LOADED_SELECTOR,
    OPEN_AT_LOAD,
    OPENED_SELECTOR,
    READY_SELECTOR,
    render_html,
)
from agentic_evals.views.text import visible

from .test_html import HOSTILE, hostile_document

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from tests.browser import ReportOpener

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / 'fixtures' / 'support'


def cli(*argv: str) -> int:
    """`main(argv)` in a thread of its own: Playwright's sync API keeps an event loop running in this one,
    where `run` could not start its own."""
    statuses: list[int] = []
    thread = threading.Thread(target=lambda: statuses.append(main(list(argv))))
    thread.start()
    thread.join()
    return statuses[0]


def support_page(tmp_path: Path, open_report: ReportOpener, *flags: str) -> Page:
    """The support agent's regressed run, written by `run --html`, opened from disk."""
    path = tmp_path / 'support.html'
    argv = ['run', str(SUPPORT / 'dataset.yaml'), str(SUPPORT / 'regressed.otlp.jsonl'), '--no-progress']
    assert cli(*argv, '--html', str(path), *flags) == 1
    page = open_report(path)
    page.wait_for_selector(OPENED_SELECTOR)  # the first failed cases open a frame after READY_SELECTOR
    return page


def shown_cases(page: Page) -> list[str]:
    return page.locator('#case-list li.case .case-name').all_inner_texts()


def _seconds(text: str) -> float:
    """A time as the page shows it (`850 µs`, `12.3 ms`, `1.25 s`), in seconds."""
    number, unit = text.split(' ')
    return float(number.replace(',', '')) * {'µs': 1e-6, 'ms': 1e-3, 's': 1.0}[unit]


def case(page: Page, name: str) -> Page:
    """Open case `name` (a click on its row, unless it is open: the first failed cases open at load) and
    return the page once its timeline, if it has one, is laid out."""
    page.wait_for_selector(OPENED_SELECTOR)  # (else the first failed cases may open after this)
    row = page.locator(f'#case-list li.case[data-case="{name}"]')
    if row.locator('.case-toggle').get_attribute('aria-expanded') != 'true':
        row.locator('.case-toggle').click()
    laid_out(row)
    return page


def laid_out(row: Locator) -> None:
    """Wait until every timeline in `row` is laid out in pixels (report.js does it once it has a width)."""
    expect(row.locator('.timeline:not([data-laid-out])')).to_have_count(0)


def test_the_summary_shows_the_numbers(tmp_path: Path, open_report: ReportOpener) -> None:
    page = support_page(tmp_path, open_report, '--min-score', 'TrajectoryMatch=0.5')
    assert page.title() == 'support_agent — agentic-evals report'
    assert page.inner_text('#verdict') == 'FAIL'  # (after a ✗ drawn by CSS, which innerText leaves out)
    tiles = {
        key: page.inner_text(f'[data-stat="{key}"] .tile-value')
        for key in ('cases', 'failed', 'passed', 'case-failures', 'assertions', 'evaluator-errors')
    }
    assert tiles == {
        'cases': '4',
        'failed': '3',
        'passed': '1',
        'case-failures': '0',
        'assertions': '10/13',
        'evaluator-errors': '0',
    }
    assert page.inner_text('#verdict-summary').startswith('FAIL: 3 of 13 assertions failed (ArgumentCorrectness on')
    gates = [row.split('\t') for row in page.locator('#gates tbody tr').all_inner_texts()]
    assert [(gate, outcome.strip()) for gate, outcome, _ in gates] == [
        ('assertions', 'fail'),
        ('min-score TrajectoryMatch', 'pass'),
    ]
    averages = {row.split('\t')[0]: row.split('\t')[1:] for row in page.locator('#averages tbody tr').all_inner_texts()}
    assert averages['TrajectoryMatch'] == ['score', '0.556', 'pass average >= 0.500']
    assert averages['ArgumentCorrectness'] == ['assertion', '33.3% (1/3)', 'fail all must pass']
    assert averages['MaxToolCalls'] == ['assertion', '100.0% (4/4)', 'pass all pass']
    metrics = [row.split('\t') for row in page.locator('#metrics tbody tr').all_inner_texts()]
    assert [m[:2] for m in metrics[:3]] == [['requests', '3.8'], ['input_tokens', '251.8'], ['output_tokens', '50.5']]
    assert metrics[3][0] == 'duration' and metrics[3][1].endswith('s')
    # failures first, then by name; the first failed cases (all three here) are open, the passing one is not
    assert shown_cases(page) == ['damaged_escalation', 'refund', 'shipping_faq', 'order_status']
    opened = page.locator('li.case:has(> .case-body:not([hidden]))')
    assert opened.evaluate_all('(rows) => rows.map((row) => row.dataset.case)') == [
        'damaged_escalation',
        'refund',
        'shipping_faq',
    ]
    assert page.locator('.timeline').count() == 3
    assert page.inner_text('#shown-count') == 'Showing 4 of 4 cases'


def test_a_failed_case_opens_to_its_reasons_timeline_and_calls(tmp_path: Path, open_report: ReportOpener) -> None:
    page = case(support_page(tmp_path, open_report), 'refund')
    body = page.locator('li.case[data-case="refund"] .case-body')
    assert body.is_visible()
    assert page.locator('li.case[data-case="refund"] .case-toggle').get_attribute('aria-expanded') == 'true'
    row = body.locator('table.results tr[data-result="ArgumentCorrectness"]')
    assert row.locator('td.value').inner_text() == 'fail'
    assert row.locator('td.reason').inner_text() == (
        "Tool 'issue_refund' argument mismatch: key 'amount': expected 25.0, got 250.0 (agent 'billing')"
    )
    score = body.locator('table.results tr[data-result="support_trajectory"]')
    assert score.locator('td.value').inner_text() == '0.800'
    assert score.locator('td').first.inner_text() == 'TrajectoryMatch'  # the evaluator, as the result's name differs
    # the timeline: a lane per agent, the sub-agent's under its parent's, a bar per call
    lanes = body.locator('.tl-lane')
    assert [lanes.nth(i).get_attribute('data-lane') for i in range(lanes.count())] == ['support', 'support › billing']
    assert body.locator('.tl-lane').nth(1).locator('.tl-label').inner_text() == '↳ billing'
    bars = body.locator('.tl-call')
    assert bars.count() == 4
    assert [bars.nth(i).get_attribute('aria-label') for i in range(4)][3].startswith('tool call issue_refund (ok, ')
    assert body.locator('.tl-lane').nth(1).locator('.tl-call').count() == 2
    assert body.locator('.tl-request').count() == 6
    assert body.locator('.tl-request').first.get_attribute('title').startswith('support_model: 60 in / 5 out tokens')
    box = bars.nth(1).bounding_box()
    track = body.locator('.tl-lane').first.locator('.tl-track').bounding_box()
    assert box is not None and track is not None and box['width'] > track['width'] / 3  # ask_billing is long
    # times in seconds, as the run took them (the fixture's run is a few seconds at most)
    starts = body.locator('table.calls tr.call td:nth-child(5)').all_inner_texts()
    durations = body.locator('table.calls tr.call td:nth-child(6)').all_inner_texts()
    assert len(starts) == len(durations) == 4
    assert all(0 <= _seconds(t) < 60 for t in [*starts, *durations, *body.locator('.tl-tick').all_inner_texts()])
    assert _seconds(starts[0]) <= _seconds(starts[3])
    # a call opens to its arguments and result, pretty-printed
    assert body.locator('.call-detail:not([hidden])').count() == 0
    bars.nth(3).click()
    detail = body.locator('.call-detail:not([hidden])')
    assert detail.count() == 1
    assert detail.locator('pre.arguments').inner_text() == '{\n  "order_id": "A100",\n  "amount": 250.0\n}'
    assert detail.locator('pre.result').inner_text() == 'refund of 250.00 EUR issued for A100'
    # and closes from the table
    body.locator('table.calls .call-toggle', has_text='issue_refund').click()
    assert body.locator('.call-detail:not([hidden])').count() == 0
    open_report.screenshot('refund-open')


def test_cases_open_from_the_keyboard(tmp_path: Path, open_report: ReportOpener) -> None:
    page = support_page(tmp_path, open_report)
    toggle = page.locator('li.case[data-case="order_status"] .case-toggle')  # passing: closed at load
    assert toggle.get_attribute('aria-expanded') == 'false'
    toggle.focus()
    page.keyboard.press('Enter')
    assert toggle.get_attribute('aria-expanded') == 'true'
    assert page.locator('li.case[data-case="order_status"] .case-body').is_visible()
    page.keyboard.press('Space')
    assert toggle.get_attribute('aria-expanded') == 'false'
    assert not page.locator('li.case[data-case="order_status"] .case-body').is_visible()


def test_the_regressed_trajectory_is_aligned(tmp_path: Path, open_report: ReportOpener) -> None:
    page = case(support_page(tmp_path, open_report), 'refund')
    body = page.locator('li.case[data-case="refund"] .case-body')
    trajectory = body.locator('.alignment[data-alignment="support_trajectory"]')
    assert trajectory.locator('h5').inner_text() == 'support_trajectory (TrajectoryMatch)'
    rows = [r.split('\t') for r in trajectory.locator('tbody tr').all_inner_texts()]
    assert rows == [
        ['= matched', 'lookup_order', 'lookup_order'],
        ['− missing', 'check_refund_policy', '—'],
        ['= matched', 'ask_billing', 'ask_billing'],
    ]
    arguments = body.locator('.alignment[data-alignment="ArgumentCorrectness"]')
    (row,) = arguments.locator('tbody tr').all()
    assert row.get_attribute('data-status') == 'mismatch'
    assert row.locator('td.align-status').inner_text() == '≠ wrong arguments'
    expected, actual = row.locator('td.mono').all()
    assert expected.inner_text() == "issue_refund(amount=25.0, order_id='A100')"
    assert expected.locator('mark').all_inner_texts() == ['amount=25.0']
    assert actual.locator('mark').all_inner_texts() == ['amount=250.0']
    assert actual.locator('ul.differences li').inner_text().startswith("key 'amount': expected 25")


def test_the_filters_and_the_search_narrow_the_list(tmp_path: Path, open_report: ReportOpener) -> None:
    page = support_page(tmp_path, open_report)
    everything = ['damaged_escalation', 'refund', 'shipping_faq', 'order_status']
    page.check('#failed-only')
    expect(page.locator('#shown-count')).to_have_text('Showing 3 of 4 cases')
    assert shown_cases(page) == ['damaged_escalation', 'refund', 'shipping_faq']
    page.uncheck('#failed-only')
    page.select_option('#evaluator', 'ToolCorrectness')
    assert shown_cases(page) == ['refund', 'shipping_faq']
    page.check('#failed-only')  # with an evaluator: the cases that evaluator failed
    assert shown_cases(page) == ['shipping_faq']
    page.uncheck('#failed-only')
    page.select_option('#evaluator', '')
    assert page.locator('#agent option').all_inner_texts() == ['All agents', 'billing', 'support']
    page.select_option('#agent', 'billing')
    assert shown_cases(page) == ['refund']
    page.select_option('#agent', '')
    assert shown_cases(page) == everything
    for query, expected in [
        ('escalate', ['damaged_escalation']),  # a reason
        ('CHECK_REFUND_POLICY', ['refund', 'shipping_faq']),  # a reason, any letter case
        ('get_payment', ['refund']),  # a tool name
        ('order_st', ['order_status']),  # a case name
        ('nothing like this', []),
    ]:
        page.fill('#search', query)
        expect(page.locator('#case-list li.case .case-name')).to_have_text(expected)  # waits out the debounce
        assert page.inner_text('#shown-count') == f'Showing {len(expected)} of 4 cases', query
    page.fill('#search', '')
    expect(page.locator('#shown-count')).to_have_text('Showing 4 of 4 cases')
    assert shown_cases(page) == everything


def test_the_first_screen_shows_a_failed_trajectory_without_a_click(tmp_path: Path, open_report: ReportOpener) -> None:
    """A new user's first look (issue 23): at a normal viewport and without a click, the case list starts on
    the first screen and the first failed cases are open to their trajectories; one button opens and closes
    every case."""
    page = support_page(tmp_path, open_report)
    viewport = page.viewport_size
    assert viewport == {'width': 1280, 'height': 720}
    assert page.evaluate('window.scrollY') == 0
    first = page.locator('#case-list li.case').first
    assert first.get_attribute('data-case') == 'damaged_escalation'  # failed
    head = first.locator('.case-toggle').bounding_box()
    body = first.locator('.case-body').bounding_box()
    assert head is not None and body is not None
    assert head['y'] + head['height'] <= viewport['height']  # the list starts on the first screen
    assert body['y'] < viewport['height']  # and so does the open case's body
    assert first.locator('.case-toggle').get_attribute('aria-expanded') == 'true'
    laid_out(first)
    for part in ('.alignment', '.timeline', '.timeline .tl-call', 'table.calls'):
        expect(first.locator(part).first).to_be_visible()
    # three failed cases open; the passing one is closed
    expanded = page.locator('.case-toggle').evaluate_all('(ts) => ts.map((t) => t.getAttribute("aria-expanded"))')
    assert expanded == ['true', 'true', 'true', 'false']
    toggle = page.locator('#toggle-all')
    expect(toggle).to_have_text('Open all')
    toggle.click()
    expect(toggle).to_have_text('Close all')
    expect(page.locator('.case-body:not([hidden])')).to_have_count(4)
    expect(page.locator('.case-toggle[aria-expanded="false"]')).to_have_count(0)
    laid_out(page.locator('li.case[data-case="order_status"]'))
    expect(page.locator('li.case[data-case="order_status"] .timeline')).to_be_visible()
    toggle.click()
    expect(toggle).to_have_text('Open all')
    expect(page.locator('.case-body:not([hidden])')).to_have_count(0)
    expect(page.locator('.case-toggle[aria-expanded="true"]')).to_have_count(0)
    # while all are open, rows drawn later (a filter draws the list again) open as they are drawn
    toggle.click()
    page.check('#failed-only')
    expect(page.locator('#shown-count')).to_have_text('Showing 3 of 4 cases')
    expect(page.locator('.case-toggle[aria-expanded="false"]')).to_have_count(0)
    open_report.screenshot('all-open')


def _scales_document() -> ReportDocument:
    """Failed cases first by name: `a scales` has calls of very different durations (2 ms beside 589 s in a
    ten-minute trace), two failed calls of half a millisecond (one at the very end) and a long tool name;
    four more failed cases and two passing ones."""
    account = TraceAccount(
        spans=9,
        families=('genai',),
        tool_spans=4,
        arguments_from_spans=4,
        arguments_from_responses=0,
        arguments_missing=0,
        results=4,
        model_spans=2,
        with_tokens=2,
        issued=4,
        issued_not_run=(),
        run_not_issued=(),
        agents=('agent',),
    )
    scales = Timeline(
        agents=[AgentSpan('agent', ['agent'], 0.0, 600.0)],
        calls=[
            CallSpan('get_weather', 'ok', ['agent'], 0.5, 0.502),
            CallSpan('long_running_batch_export', 'ok', ['agent'], 1.0, 590.0),
            CallSpan('charge_card', 'failed', ['agent'], 590.5, 590.5005, result='card declined'),
            CallSpan('send_receipt_email_to_the_customer', 'failed', ['agent'], 599.9995, 600.0, result='timeout'),
        ],
        requests=[
            RequestSpan('gpt', ['agent'], 0.0, 0.4, 120, 30),
            RequestSpan('gpt', ['agent'], 10.0, 400.0, 400, 80),
        ],
    )
    small = Timeline(
        agents=[AgentSpan('agent', ['agent'], 0.0, 1.0)], calls=[CallSpan('lookup', 'ok', ['agent'], 0.1, 0.9)]
    )
    failed = AssertionResult(False, 'a call failed')
    cases = [CaseResult('a scales', assertions={'ok': failed}, timeline=scales, account=account)]
    cases += [CaseResult(f'b failed {i}', assertions={'ok': failed}, timeline=small) for i in range(4)]
    cases += [
        CaseResult(f'c passed {i}', assertions={'ok': AssertionResult(True, 'fine')}, timeline=small) for i in range(2)
    ]
    return ReportDocument(name='scales', cases=cases).with_derived()


def _boxes_overlap(a: Any, b: Any) -> bool:
    return bool(
        a['x'] < b['x'] + b['width']
        and b['x'] < a['x'] + a['width']
        and a['y'] < b['y'] + b['height']
        and b['y'] < a['y'] + a['height']
    )


def test_timeline_labels_stay_readable_and_failed_calls_visible_at_any_scale(
    tmp_path: Path, open_report: ReportOpener
) -> None:
    document = _scales_document()
    page = open_report.html(render_html(document, Gates(), check_gates(document, Gates())))
    page.wait_for_selector(OPENED_SELECTOR)
    # the first three failed cases are open, no more (the fourth and fifth failed ones, the passing ones)
    expanded = page.locator('.case-toggle').evaluate_all('(ts) => ts.map((t) => t.getAttribute("aria-expanded"))')
    assert expanded == ['true'] * 3 + ['false'] * 4
    row = page.locator('li.case[data-case="a scales"]')
    laid_out(row)
    track = row.locator('.tl-lane .tl-track')
    bars = track.locator('.tl-call')

    def check(width: int) -> None:
        track.scroll_into_view_if_needed()  # boxes relative to the viewport, for elementFromPoint
        track_box = track.bounding_box()
        assert track_box is not None
        boxes = {bar.get_attribute('title'): bar.bounding_box() for bar in bars.all()}
        # a 2 ms bar in a ten-minute trace: its label beside it, whole, overlapping no other bar
        short = bars.filter(has_text='get_weather')
        assert short.get_attribute('title') == 'get_weather (ok, 2 ms)'  # the whole name on hover
        assert 'tl-beside' in (short.get_attribute('class') or '')
        label = short.locator('.tl-text')
        assert label.inner_text() == '✓ get_weather'  # not cut ("✓ ge")
        assert label.evaluate('(e) => e.scrollWidth <= e.clientWidth')  # nothing hidden, no ellipsis
        label_box, bar_box = label.bounding_box(), boxes['get_weather (ok, 2 ms)']
        assert label_box is not None and bar_box is not None
        assert label_box['x'] >= bar_box['x'] + bar_box['width']  # beside, not inside
        assert label_box['x'] + label_box['width'] <= track_box['x'] + track_box['width']
        for title, box in boxes.items():
            assert not _boxes_overlap(label_box, box), title
        # hovering the label is hovering its bar: the tooltip is the bar's title
        hovered = page.evaluate(
            '([x, y]) => document.elementFromPoint(x, y).closest("[title]").title',
            [label_box['x'] + label_box['width'] / 2, label_box['y'] + label_box['height'] / 2],
        )
        assert hovered == 'get_weather (ok, 2 ms)'
        # the long call holds its own label
        long = bars.filter(has_text='long_running_batch_export')
        assert 'tl-beside' not in (long.get_attribute('class') or '')
        assert long.locator('.tl-text').evaluate('(e) => e.scrollWidth <= e.parentElement.clientWidth')
        # half a millisecond in ten minutes: a failed call is still a bar of visible width, inside the track
        failed = bars.and_(page.locator('.status-failed'))
        assert failed.count() == 2
        for bar in failed.all():
            box = bar.bounding_box()
            assert box is not None and box['width'] >= 16, (width, box)
            assert track_box['x'] <= box['x'] and box['x'] + box['width'] <= track_box['x'] + track_box['width'] + 1
            assert bar.locator('.tl-text').inner_text().startswith('✗ ')
        assert (
            bars.filter(has_text='send_receipt_email_to_the_customer')
            .locator('.tl-text')
            .evaluate('(e) => e.getBoundingClientRect().right <= e.closest(".tl-call").getBoundingClientRect().left')
        )  # at the very end of the trace: its label on the left, where there is room
        # a request's figure is whole or absent (the title has it), never cut
        for request in row.locator('.tl-request').all():
            text = request.locator('.tl-text')
            if text.count() and text.is_visible():
                assert text.evaluate('(e) => e.scrollWidth <= e.parentElement.clientWidth')

    check(1280)
    open_report.screenshot('wide')
    before = row.locator('.timeline').get_attribute('data-laid-out')
    page.set_viewport_size({'width': 900, 'height': 720})
    expect(row.locator('.timeline')).not_to_have_attribute('data-laid-out', before or '')  # laid out again
    check(900)


def test_no_token_figure_where_the_trace_records_none(tmp_path: Path, open_report: ReportOpener) -> None:
    """OpenLLMetry's OpenAI Agents trace records no token usage (its account: 6 model spans, 0 with tokens):
    its request bars show no "0→0", and the requests say the tokens were not recorded."""
    evaluators = tmp_path / 'evaluators.yaml'
    evaluators.write_text('evaluators:\n- MaxToolCalls: 10\n', encoding='utf-8')
    path = tmp_path / 'openllmetry.html'
    traces = str(ROOT / 'fixtures' / 'frameworks' / 'openai_agents' / 'openllmetry.otlp.jsonl')
    assert cli('run', '--evaluators', str(evaluators), traces, '--html', str(path), '--no-progress') == 0
    page = open_report(path)
    page.wait_for_selector(READY_SELECTOR)
    (name,) = shown_cases(page)
    case(page, name)
    requests = page.locator('.tl-request')
    assert requests.count() == 6
    assert requests.locator('.tl-text').count() == 0  # no figure at all
    assert all('tokens not recorded' in (r.get_attribute('title') or '') for r in requests.all())
    assert '0→0' not in page.inner_text('body')
    summary = page.locator('details.requests summary')
    assert summary.inner_text() == '6 model requests: tokens not recorded'
    summary.click()
    cells = page.locator('details.requests tbody tr').first.locator('td').all_inner_texts()
    assert cells[4:6] == ['not recorded', 'not recorded']


def test_opened_from_disk_it_loads_nothing(tmp_path: Path, open_report: ReportOpener) -> None:
    page = case(support_page(tmp_path, open_report), 'refund')
    page.locator('li.case[data-case="refund"] .tl-call').first.click()
    assert page.url.startswith('file:///')
    assert page.evaluate("performance.getEntriesByType('resource').map((e) => e.name)") == []
    assert open_report.problems() == []


def test_sub_agents_and_failed_calls(tmp_path: Path, open_report: ReportOpener) -> None:
    evaluators = tmp_path / 'evaluators.yaml'
    evaluators.write_text('evaluators:\n- MaxFailedCalls: 0\n', encoding='utf-8')
    path = tmp_path / 'scenario.html'
    traces = str(ROOT / 'fixtures' / 'scenario' / 'v5.otlp.jsonl')
    assert cli('run', '--evaluators', str(evaluators), traces, '--html', str(path), '--no-progress') == 1
    page = open_report(path)
    page.wait_for_selector(READY_SELECTOR)
    case(page, 'v5')
    lanes = page.locator('.tl-lane')
    assert [lanes.nth(i).get_attribute('data-lane') for i in range(lanes.count())] == [
        'main',
        'main › expert',
        'crasher',
    ]
    failed = page.locator('.tl-call.status-failed')
    assert failed.count() == 4
    assert all(t.startswith('✗') for t in failed.all_inner_texts())
    assert page.locator('.tl-call.status-deferred').count() == 1
    statuses = page.locator('table.calls td .status').all_inner_texts()
    assert statuses.count('✗ failed') == 4 and statuses.count('‖ deferred') == 1
    failed.last.click()
    detail = page.locator('.call-detail:not([hidden])')
    assert detail.locator('h6').all_inner_texts() == ['Arguments', 'Error']


def test_hostile_text_is_shown_as_text(tmp_path: Path, open_report: ReportOpener) -> None:
    document = hostile_document()
    gates = Gates()
    page = open_report.html(render_html(document, gates, check_gates(document, gates)))
    dialogs: list[str] = []
    page.on('dialog', lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.wait_for_selector(READY_SELECTOR)
    page.click('#toggle-all')
    page.locator('.tl-call').first.click()
    shown = visible(HOSTILE)
    assert page.locator('h1').inner_text().startswith(shown)
    assert page.locator('img, iframe, object, embed').count() == 0
    assert page.locator('script').count() == 2
    assert shown in page.locator('.case-name').all_inner_texts()
    assert page.locator('pre.arguments').inner_text() == shown
    assert page.locator('.tl-lane').get_attribute('data-lane') == shown
    assert dialogs == []


def test_a_case_without_spans_says_so(tmp_path: Path, open_report: ReportOpener) -> None:
    document = ReportDocument(
        name='plain', cases=[CaseResult('a', assertions={'ok': AssertionResult(True, 'fine')})]
    ).with_derived()
    page = open_report.html(render_html(document, Gates(), check_gates(document, Gates())))
    page.wait_for_selector(READY_SELECTOR)
    case(page, 'a')
    assert page.inner_text('.no-timeline') == 'No timeline: the report holds no spans for this case.'


def _many(cases: int) -> ReportDocument:
    """A generated report of `cases` cases, one in ten failing, each with a small timeline and an alignment."""
    results = []
    for i in range(cases):
        failing = i % 10 == 3
        calls = [
            CallSpan(
                f'tool_{k}',
                'failed' if failing and k == 2 else 'ok',
                ['agent', 'helper'] if k % 2 else ['agent'],
                0.1 * k,
                0.1 * k + 0.05,
                arguments=f'{{"query": "case {i} call {k}", "limit": {k}}}',
                result=f'result {k} of case {i}',
            )
            for k in range(6)
        ]
        timeline = Timeline(
            agents=[AgentSpan('agent', ['agent'], 0, 0.7), AgentSpan('helper', ['agent', 'helper'], 0.1, 0.6)],
            calls=calls,
            requests=[RequestSpan('model', ['agent'], 0.0, 0.05, 100 + i % 50, 20)],
        )
        alignment = Alignment('TrajectoryMatch', 'TrajectoryMatch', [AlignedCall('matched', 'tool_0', 'tool_0')])
        results.append(
            CaseResult(
                f'case {i:05d}',
                scores={'TrajectoryMatch': ScoreResult(0.5 if failing else 1.0, 'LCS ...', 'TrajectoryMatch')},
                assertions={'MaxToolCalls': AssertionResult(not failing, f'{6} tool call(s), budget=5')},
                metrics={'requests': 1, 'input_tokens': 100 + i % 50},
                duration=0.7,
                timeline=timeline,
                alignments=[alignment],
            )
        )
    return ReportDocument(name='many', cases=results).with_derived()


@pytest.mark.parametrize('cases', [10_000])
def test_ten_thousand_cases_load_and_show_their_first_rows(
    tmp_path: Path, open_report: ReportOpener, cases: int
) -> None:
    document = _many(cases)
    gates = Gates()
    text = render_html(document, gates, check_gates(document, gates))
    assert 'application/gzip-base64' in text  # compressed: a few megabytes, not tens
    page = open_report.html(text, file_name='many.html')
    page.wait_for_selector(READY_SELECTOR, timeout=120_000)
    assert page.inner_text('[data-stat="cases"] .tile-value') == '10,000'
    assert page.inner_text('[data-stat="failed"] .tile-value') == '1,000'
    page.wait_for_selector(LOADED_SELECTOR, timeout=120_000)  # every case in: the filters work
    page.wait_for_selector(OPENED_SELECTOR)
    assert page.inner_text('#shown-count') == 'Showing 10,000 of 10,000 cases'
    rows = page.locator('#case-list li.case')
    first = rows.count()
    assert 0 < first <= 300  # drawn a batch at a time, not 10,000 rows
    # the first three failed cases open (their timelines), no other case
    assert page.locator('.timeline').count() == OPEN_AT_LOAD
    assert page.locator('li.case:has(> .case-body:not([hidden]))').evaluate_all(
        '(rows) => rows.map((row) => row.dataset.case)'
    ) == ['case 00003', 'case 00013', 'case 00023']
    assert rows.first.locator('.case-name').inner_text() == 'case 00003'  # a failed case first
    page.locator('button.more').scroll_into_view_if_needed()
    expect(rows).not_to_have_count(first)  # the next batch, drawn as the end of the list comes into view
    assert rows.count() > first
    case(page, 'case 00003')
    assert rows.first.locator('.timeline .tl-call').count() == 6
    page.check('#failed-only')
    expect(page.locator('#shown-count')).to_have_text('Showing 1,000 of 10,000 cases')
    assert rows.first.locator('.case-name').inner_text() == 'case 00003'
    assert page.locator('#case-list li.case.pass').count() == 0


AT_READY = """
(() => {
  new MutationObserver((_, observer) => {
    if (!document.body || !document.body.hasAttribute('data-opened')) return;
    observer.disconnect();
    const open = [...document.querySelectorAll('#case-list li.case')].filter((row) => !row.querySelector('.case-body').hidden);
    window.__opened = {
      open: open.map((row) => row.dataset.case),
      // the first three whole in the first payload: their details are drawn at once, whether or not the
      // parts are read yet (the fourth, opened by a click at ready, waits for them)
      timelines: open.slice(0, 3).map((row) => row.querySelectorAll('.timeline').length),
    };
  }).observe(document, {subtree: true, childList: true, attributes: true});
  const seen = window.__atReady = {};
  new MutationObserver((_, observer) => {
    if (!document.body || !document.body.hasAttribute('data-ready')) return;
    observer.disconnect();
    const more = document.querySelector('#cases button.more');
    Object.assign(seen, {
      parts: document.querySelectorAll('script.payload-part').length,
      loaded: document.body.hasAttribute('data-loaded'),
      summary: document.querySelector('[data-stat="cases"] .tile-value').textContent,
      rows: document.querySelectorAll('#case-list li.case').length,
      first: document.querySelector('#case-list li.case .case-name').textContent,
      brief: document.querySelector('#case-list li.case .case-brief').textContent,
      disabled: ['failed-only', 'evaluator', 'agent', 'search'].map((id) => document.getElementById(id).disabled),
      count: document.getElementById('shown-count').textContent,
      note: document.getElementById('cases-loading').textContent,
      more: more.hidden,
      open: [...document.querySelectorAll('#case-list li.case')]
        .filter((row) => !row.querySelector('.case-body').hidden).map((row) => row.dataset.case),
    });
    const toggle = document.querySelectorAll('#case-list li.case .case-toggle')[3];
    toggle.click();  // opened before its details are in
    seen.opened = toggle.closest('li').querySelector('.case-body').textContent;
  }).observe(document, {subtree: true, childList: true, attributes: true});
})();
"""
"""Run at document start: what the page shows at the moment it marks itself ready, taken in the same
microtask checkpoint, before the parser goes on past the page's script (so deterministic)."""


def test_a_split_report_shows_its_summary_and_first_rows_before_the_rest_is_read(
    tmp_path: Path, open_report: ReportOpener
) -> None:
    document = _many(250)
    gates = Gates()
    path = tmp_path / 'split.html'
    path.write_text(render_html(document, gates, check_gates(document, gates)), encoding='utf-8')
    page = open_report.new_page()
    page.add_init_script(AT_READY)
    page.goto(path.as_uri())
    page.wait_for_selector(LOADED_SELECTOR)
    seen = page.evaluate('window.__atReady')
    assert page.evaluate('window.__opened') == {
        'open': ['case 00003', 'case 00013', 'case 00023', 'case 00033'],  # the fourth opened by a click above
        'timelines': [1, 1, 1],
    }
    assert seen == {
        'parts': 0,  # drawn before the parser reached the cases' parts
        'loaded': False,
        'summary': '250',
        'rows': FIRST_ROWS,
        'first': 'case 00003',
        'brief': 'failed: MaxToolCalls · 6 calls · 700 ms',
        'disabled': [True, True, True, True],  # no filter applies to a part of the list
        'count': f'Showing the first {FIRST_ROWS} of 250 cases',
        'note': 'Loading 150 more cases… (the filters and the search work once they are in)',
        'more': True,
        'open': [],  # the first failed cases open a frame later
        'opened': 'Loading this case…',
    }
    # once every case is in: the filters work, the note is gone, the case opened early has its details
    for control in ('#failed-only', '#evaluator', '#agent', '#search'):
        expect(page.locator(control)).to_be_enabled()
    assert page.inner_text('#shown-count') == 'Showing 250 of 250 cases'
    assert page.locator('#cases-loading').count() == 0
    rows = page.locator('#case-list li.case')
    early = rows.nth(OPEN_AT_LOAD).locator('.case-body')
    assert early.locator('table.results tr[data-result="MaxToolCalls"] td.reason').inner_text() == (
        '6 tool call(s), budget=5'
    )
    assert early.locator('.tl-call').count() == 6
    # a first row drawn from its list data opens to the whole case
    case(page, 'case 00043')
    assert rows.nth(4).locator('.case-body .tl-lane').count() == 2
    assert rows.count() == FIRST_ROWS
    page.check('#failed-only')
    expect(page.locator('#shown-count')).to_have_text('Showing 25 of 250 cases')


def test_a_finished_list_has_no_show_more_button(tmp_path: Path, open_report: ReportOpener) -> None:
    document = _many(250)
    gates = Gates()
    page = open_report.html(render_html(document, gates, check_gates(document, gates)))
    page.wait_for_selector(LOADED_SELECTOR)
    more = page.locator('#cases button.more')
    expect(more).to_have_text('Show more (150 more)')
    rows = page.locator('#case-list li.case')
    for _ in range(3):  # a batch a click (or sooner, as the button comes into view): 150 more in two
        if rows.count() == 250:
            break
        try:  # the page may load the last batch itself, and hide the button, before the click lands
            more.click(timeout=5_000)
        except PlaywrightTimeoutError:
            break
    expect(rows).to_have_count(250)
    assert more.get_attribute('hidden') == ''
    expect(more).to_be_hidden()  # hidden means not shown: no "Show more (0 more)"
    page.fill('#search', 'case 0000')
    expect(page.locator('#shown-count')).to_have_text('Showing 10 of 250 cases')
    expect(more).to_be_hidden()


def test_escapes_in_arguments_stay_escapes(tmp_path: Path, open_report: ReportOpener) -> None:
    """A JSON escape of a bidi override (or a control) in a call's arguments is shown as the escape, never
    as the character it stands for; a raw one in a value is shown as `visible` writes it."""
    escaped = '{"q": "\\u202eabc"}'
    timeline = Timeline(
        agents=[AgentSpan('agent', ['agent'], 0.0, 1.0)],
        calls=[CallSpan('search', 'ok', ['agent'], 0.1, 0.2, arguments=escaped, result='["\\u0007", "\\u2066x"]')],
    )
    document = ReportDocument(
        name='escapes', cases=[CaseResult('a', inputs={'q': '\u202eabc'}, timeline=timeline)]
    ).with_derived()
    page = open_report.html(render_html(document, Gates(), check_gates(document, Gates())))
    page.wait_for_selector(READY_SELECTOR)
    case(page, 'a')
    page.locator('.tl-call').first.click()
    assert page.inner_text('pre.arguments') == '{\n  "q": "\\u202eabc"\n}'
    assert page.inner_text('pre.result') == '[\n  "\\u0007",\n  "\\u2066x"\n]'
    page.locator('details.value summary').first.click()
    assert page.inner_text('details.value pre') == '{\n  "q": "\\u202eabc"\n}'
    hidden = r'/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/'
    assert page.evaluate(f'() => {hidden}.test(document.body.textContent)') is False


def test_the_page_escapes_text_as_visible_does(tmp_path: Path, open_report: ReportOpener) -> None:
    """`AE.visible` (what the page shows text it makes through) agrees with Python's `visible` on every
    code point, lone surrogates included."""
    document = ReportDocument(name='plain', cases=[CaseResult('a')]).with_derived()
    page = open_report.html(render_html(document, Gates(), check_gates(document, Gates())))
    page.wait_for_selector(READY_SELECTOR)
    shown = page.evaluate(
        """() => {
          const chars = [];
          for (let c = 0; c < 0x110000; c++) chars.push(String.fromCodePoint(c));
          return AE.visible(chars.join('|') + '|\\u202e|\\x1b|' + String.fromCodePoint(0x1f600));
        }"""
    )
    everything = '|'.join(chr(c) for c in range(0x110000)) + '|\\u202e|\\x1b|\U0001f600'
    assert shown == visible(everything)


def test_screenshots_are_named_after_the_module_and_the_test(open_report: ReportOpener) -> None:
    """Two modules may have tests of the same name: each keeps its screenshots."""
    assert open_report.name == 'test_html_browser-test_screenshots_are_named_after_the_module_and_the_test'
    open_report.html('<!DOCTYPE html><title>t</title><p>x</p>')
    assert open_report.screenshot('extra').name == f'{open_report.name}-extra.png'


def test_the_page_writes_durations_as_every_view_does(tmp_path: Path, open_report: ReportOpener) -> None:
    """`AE.seconds` (page.js) and `format_duration` (every other view, the gates' details) write the same."""
    from agentic_evals.reports.gates import format_duration

    samples = [
        0.0,
        0.0000004,
        0.00085,
        0.000999,
        0.0012345,
        0.008977,
        0.0123,
        0.731,
        0.99996,
        1.0,
        1.25,
        12.345,
        1250.0,
    ]
    page = support_page(tmp_path, open_report)
    shown = page.evaluate('(samples) => samples.map((s) => AE.seconds(s))', samples)
    assert shown == [format_duration(s) for s in samples]
