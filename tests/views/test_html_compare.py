"""The comparison as HTML (views/html_compare.py): the payload the page draws, and the page around it.

The real comparison is the support agent's baseline against its regressed run, read from the trace
files committed in `fixtures/support/`; the browser tests (test_html_compare_browser.py) open the
same pages in chromium.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agentic_evals.cli import main
from agentic_evals.reports.compare import Comparison, compare_documents
from agentic_evals.reports.document import (
    AlignedCall,
    Alignment,
    AssertionResult,
    CallSpan,
    CaseFailure,
    CaseResult,
    EvaluatorError,
    LabelResult,
    ReportDocument,
    RequestSpan,
    ScoreResult,
    Timeline,
    read_document,
)
from agentic_evals.trajectory.account import TraceAccount
from agentic_evals.views.html_compare import VIEW, comparison_payload, render_comparison_html
from agentic_evals.views.html_page import read_payload

SUPPORT = Path(__file__).resolve().parents[2] / 'fixtures' / 'support'
HOSTILE = '</script><img src=x onerror=alert(1)>'
"""Text that would close the payload's element and run a script if it ever reached the page as markup."""


@functools.cache
def support_reports() -> tuple[ReportDocument, ReportDocument]:
    """The support agent's baseline and regressed reports, written by `run --json` from the committed traces."""
    directory = Path(tempfile.mkdtemp(prefix='agentic-evals-html-compare-'))
    try:
        documents = []
        for variant in ('baseline', 'regressed'):
            path = directory / f'{variant}.json'
            argv = ['run', str(SUPPORT / 'dataset.yaml'), str(SUPPORT / f'{variant}.otlp.jsonl'), '--json', str(path)]
            status = _in_a_thread(main, [*argv, '--no-progress', '--allow-failures', '--quiet'])
            assert status == 0, f'run --json {variant} exited with status {status}'
            documents.append(read_document(path))
        return documents[0], documents[1]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _in_a_thread(function: Callable[[list[str]], int], argv: list[str]) -> int:
    """`function(argv)` in a thread of its own: `run` starts an event loop, which it cannot do inside
    another one (Playwright's, when a browser test asks first)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, argv).result()


def support_comparison() -> Comparison:
    return compare_documents(*support_reports())


def _case(name: str, **results: Any) -> CaseResult:
    """A case whose results are given as `Name=value`: a bool is an assertion, a number a score, a str a label."""
    case = CaseResult(name=name)
    for key, value in results.items():
        if isinstance(value, bool):
            case.assertions[key] = AssertionResult(value, f'{key} said {value}', key)
        elif isinstance(value, int | float):
            case.scores[key] = ScoreResult(float(value), f'{key} scored {value}', key)
        else:
            case.labels[key] = LabelResult(value, None, key)
    return case


def _doc(name: str, *cases: CaseResult, failures: tuple[CaseFailure, ...] = ()) -> ReportDocument:
    return ReportDocument(name=name, cases=list(cases), failures=list(failures)).with_derived()


def mixed_comparison() -> Comparison:
    """Every kind of case: worse, improved, unchanged, removed, added, no longer run, an evaluator error."""
    baseline = _doc(
        'before',
        _case('alpha', ToolCorrectness=True, TrajectoryMatch=1.0),
        _case('beta', ToolCorrectness=True, TrajectoryMatch=0.5),
        _case('gamma', ToolCorrectness=True, TrajectoryMatch=1.0),
        _case('delta', ToolCorrectness=True),
        _case('zeta', TrajectoryMatch=1.0),
        _case('eta', ToolCorrectness=True),
    )
    broken = _case('eta')
    broken.evaluator_errors.append(EvaluatorError('ToolCorrectness', 'the judge is down', 'ToolCorrectness'))
    candidate = _doc(
        'after',
        _case('alpha', ToolCorrectness=False, TrajectoryMatch=1.0),
        _case('beta', ToolCorrectness=True, TrajectoryMatch=1.0),
        _case('gamma', ToolCorrectness=True, TrajectoryMatch=1.0),
        _case('epsilon', ToolCorrectness=True),
        broken,
        failures=(CaseFailure('zeta', 'no trace found for the case'),),
    )
    return compare_documents(baseline, candidate)


def hostile_comparison() -> Comparison:
    """Hostile text everywhere data reaches the page: names, reasons, labels, arguments, results, alignments."""

    def case(amount: int, passed: bool) -> CaseResult:
        call = CallSpan(
            name=HOSTILE,
            status='ok',
            agent_path=[HOSTILE],
            start=0.0,
            end=0.1,
            arguments=json.dumps({HOSTILE: amount, 'note': f'{HOSTILE}\x1b[2J\u202e'}),  # escaped by JSON
            result=HOSTILE,
        )
        row = AlignedCall('mismatch', expected=HOSTILE, actual=f'{HOSTILE}(x=1)', keys=[HOSTILE], differences=[HOSTILE])
        return CaseResult(
            name=HOSTILE,
            inputs=HOSTILE,
            scores={HOSTILE: ScoreResult(1.0 if passed else 0.0, HOSTILE, HOSTILE)},
            assertions={'ok': AssertionResult(passed, f'{HOSTILE}\x1b]0;title\x07\u202e', HOSTILE)},
            labels={'label': LabelResult(HOSTILE, HOSTILE, HOSTILE)},
            metrics={HOSTILE: amount},
            trace_id=HOSTILE,
            timeline=Timeline(calls=[call]),
            alignments=[Alignment(HOSTILE, HOSTILE, [row])],
        )

    baseline = _doc(HOSTILE, case(25, True), failures=(CaseFailure(f'{HOSTILE}-gone', HOSTILE),))
    candidate = _doc(HOSTILE, case(250, False), _case(f'{HOSTILE}-new', ok=True))
    return compare_documents(baseline, candidate)


def big_comparison(cases: int = 10_000, changed_every: int = 100) -> Comparison:
    """`cases` cases of four calls each, one in `changed_every` worse in the candidate."""

    def case(index: int, worse: bool) -> CaseResult:
        calls = [
            CallSpan(f'tool_{k}', 'ok', ['agent'], k * 0.1, k * 0.1 + 0.05, f'{{"i": {index}, "k": {k}}}', 'done')
            for k in range(4)
        ]
        return CaseResult(
            name=f'case-{index:05d}',
            scores={'TrajectoryMatch': ScoreResult(0.5 if worse else 1.0, 'LCS', 'TrajectoryMatch')},
            assertions={'MaxToolCalls': AssertionResult(not worse, '4 tool call(s)', 'MaxToolCalls')},
            metrics={'requests': 3},
            trace_id=f'{index:032x}',
            timeline=Timeline(calls=calls),
        )

    baseline = _doc('big', *(case(i, False) for i in range(cases)))
    candidate = _doc('big', *(case(i, i % changed_every == changed_every - 1) for i in range(cases)))
    return compare_documents(baseline, candidate)


# -- the payload -------------------------------------------------------------------------------------


def test_the_verdict_and_the_averages_regressions_first() -> None:
    comparison = support_comparison()
    payload = comparison_payload(comparison)
    assert payload['view'] == VIEW
    assert payload['verdict'] == {
        'passed': False,
        'summary': comparison.summary,
        'tolerance': '0.000',
        'regressions': 5,
        'improved': 0,
        'compared': 8,
    }
    assert [r['name'] for r in payload['runs']] == ['support_agent', 'support_agent']
    assert [(r['cases'], r['failed_cases'], r['fail_rate']) for r in payload['runs']] == [
        (4, 0, '0.000'),
        (4, 3, '0.750'),
    ]
    rows = [(a['name'], a['kind'], a['baseline'], a['candidate'], a['delta'], a['status']) for a in payload['averages']]
    assert rows == [
        ('TrajectoryMatch', 'score', '1.000', '0.556', '-0.444', 'regressed'),
        ('support_trajectory', 'score', '1.000', '0.800', '-0.200', 'regressed'),
        ('ArgumentCorrectness', 'pass rate', '1.000', '0.333', '-0.667', 'regressed'),
        ('ToolCorrectness', 'pass rate', '1.000', '0.000', '-1.000', 'regressed'),
        ('(fail rate)', 'fail rate', '0.000', '0.750', '+0.750', 'regressed'),
        ('MaxModelRequests', 'pass rate', '1.000', '1.000', '+0.000', ''),
        ('MaxToolCalls', 'pass rate', '1.000', '1.000', '+0.000', ''),
        ('billing_tools', 'pass rate', '1.000', '1.000', '+0.000', ''),
        ('input_tokens', 'metric', '232', '251.8', '+19.750', ''),
        ('output_tokens', 'metric', '44.5', '50.5', '+6.000', ''),
        ('requests', 'metric', '3.5', '3.75', '+0.250', ''),
    ]
    evaluators = {a['name']: a['evaluators'] for a in payload['averages']}
    # A result named in the dataset is filed under the evaluator that produced it, for the evaluator filter.
    assert evaluators['support_trajectory'] == ['TrajectoryMatch']
    assert evaluators['billing_tools'] == ['ToolCorrectness']
    assert evaluators['(fail rate)'] == evaluators['requests'] == []
    assert payload['evaluators'] == [
        'ArgumentCorrectness',
        'MaxModelRequests',
        'MaxToolCalls',
        'ToolCorrectness',
        'TrajectoryMatch',
    ]
    assert payload['averages'][0]['summary'] == 'TrajectoryMatch average 1.000 -> 0.556 (-0.444)'


def test_the_refund_case_carries_both_runs() -> None:
    payload = comparison_payload(support_comparison())
    cases = {c['name']: c for c in payload['cases']}
    assert [c['change'] for c in payload['cases']] == ['worse'] * 4
    refund = cases['refund']
    assert refund['states'] == ['ran', 'ran'] and refund['case_change'] is None
    results = {r['name']: r for r in refund['results']}
    assert results['ArgumentCorrectness']['baseline']['value'] == 'pass'
    assert results['ArgumentCorrectness']['candidate'] == {
        'kind': 'assertion',
        'value': 'FAIL',
        'passed': False,
        'reason': "Tool 'issue_refund' argument mismatch: key 'amount': expected 25.0, got 250.0 (agent 'billing')",
        'evaluator': 'ArgumentCorrectness',
    }
    assert (results['ArgumentCorrectness']['changed'], results['ArgumentCorrectness']['worse']) == (True, True)
    assert (
        results['support_trajectory']['baseline']['value'],
        results['support_trajectory']['candidate']['value'],
    ) == (
        '1.000',
        '0.800',
    )
    assert (results['MaxToolCalls']['changed'], results['MaxToolCalls']['worse']) == (False, False)
    baseline, candidate = refund['runs']
    assert [c['name'] for c in baseline['timeline']['calls']] == [
        'lookup_order',
        'check_refund_policy',
        'ask_billing',
        'get_payment',
        'issue_refund',
    ]
    assert [c['name'] for c in candidate['timeline']['calls']] == [
        'lookup_order',
        'ask_billing',
        'get_payment',
        'issue_refund',
    ]
    # Arguments that are a JSON object arrive as fields, each value as JSON text, for the page to compare.
    assert candidate['timeline']['calls'][-1]['fields'] == [['order_id', '"A100"'], ['amount', '250.0']]
    assert baseline['timeline']['calls'][-1]['fields'] == [['order_id', '"A100"'], ['amount', '25.0']]
    assert candidate['timeline']['calls'][-1]['status'] == 'ok'
    assert candidate['timeline']['calls'][-1]['agent_path'] == ['support', 'billing']
    assert re.fullmatch('[0-9a-f]{32}', candidate['trace_id']) and candidate['trace_id'] != baseline['trace_id']
    assert candidate['metrics'] == {'input_tokens': '395', 'output_tokens': '79', 'requests': '6'}
    alignments = {a['result']: a for a in candidate['alignments']}
    assert [r['status'] for r in alignments['support_trajectory']['rows']] == ['matched', 'missing', 'matched']
    assert alignments['support_trajectory']['rows'][1]['expected'] == 'check_refund_policy'
    (mismatch,) = alignments['ArgumentCorrectness']['rows']
    assert (mismatch['status'], mismatch['keys']) == ('mismatch', ['amount'])
    assert mismatch['actual'] == "issue_refund(amount=250.0, order_id='A100')"
    assert [r['status'] for a in baseline['alignments'] for r in a['rows']] == ['matched'] * 4


def test_cases_in_order_worse_then_changed_then_unchanged_and_whole_case_changes() -> None:
    payload = comparison_payload(mixed_comparison())
    assert [(c['name'], c['change']) for c in payload['cases']] == [
        ('alpha', 'worse'),  # an assertion now fails
        ('delta', 'worse'),  # removed from the candidate
        ('zeta', 'worse'),  # no longer runs
        ('eta', 'worse'),  # an evaluator error
        ('beta', 'changed'),  # a better score
        ('epsilon', 'changed'),  # added
        ('gamma', 'unchanged'),
    ]
    cases = {c['name']: c for c in payload['cases']}
    assert cases['delta']['case_change'] == {'baseline': 'ran', 'candidate': 'absent', 'worse': True}
    assert cases['epsilon']['case_change'] == {'baseline': 'absent', 'candidate': 'ran', 'worse': False}
    assert cases['zeta']['states'] == ['ran', 'failed to run']
    assert cases['zeta']['runs'][1] == {'error': 'no trace found for the case'}
    assert cases['delta']['runs'][1] is None and cases['epsilon']['runs'][0] is None
    eta = {r['name']: r for r in cases['eta']['results']}['ToolCorrectness']
    assert (eta['baseline']['value'], eta['candidate']['value'], eta['candidate']['reason'], eta['worse']) == (
        'pass',
        'ERROR',
        'the judge is down',
        True,
    )
    beta = {r['name']: r for r in cases['beta']['results']}
    assert (beta['TrajectoryMatch']['changed'], beta['TrajectoryMatch']['worse']) == (True, False)
    # Trajectories only for changed cases: an unchanged case carries its results alone.
    assert 'runs' not in cases['gamma'] and all('runs' in c for c in payload['cases'] if c['change'] != 'unchanged')
    assert cases['alpha']['evaluators'] == ['ToolCorrectness', 'TrajectoryMatch']


def test_the_page_agrees_with_the_comparison_the_terminal_shows() -> None:
    """Changed and worse come from `Comparison.cases`, the list the terminal and Markdown views print."""
    for comparison in (support_comparison(), mixed_comparison()):
        payload = comparison_payload(comparison)
        flagged = {
            (c['name'], r['name'], r['worse']) for c in payload['cases'] for r in c['results'] if r['changed']
        } | {(c['name'], '(case)', c['case_change']['worse']) for c in payload['cases'] if c['case_change']}
        assert flagged == {(c.case, c.result, c.worse) for c in comparison.cases}


def test_no_change_is_a_pass_with_every_case_unchanged() -> None:
    baseline = support_reports()[0]
    payload = comparison_payload(compare_documents(baseline, baseline))
    assert payload['verdict']['passed'] is True
    assert payload['verdict']['summary'].startswith('PASS: no score, pass rate or fail rate regressed')
    assert {a['status'] for a in payload['averages']} == {''}
    assert {c['change'] for c in payload['cases']} == {'unchanged'}
    assert not any('runs' in c for c in payload['cases'])


# -- the page ----------------------------------------------------------------------------------------


def test_the_page_is_self_contained_and_embeds_the_payload() -> None:
    comparison = support_comparison()
    page = render_comparison_html(comparison)
    assert page.startswith('<!DOCTYPE html>\n')
    assert read_payload(page) == comparison_payload(comparison)
    assert '<title>agentic-evals compare: support_agent -&gt; support_agent (regression)</title>' in page
    assert "default-src 'none'" in page
    # Nothing to load: no URL in any attribute, no external script or stylesheet, no remote address.
    assert not re.search(r'\s(src|href|action)=', page)
    assert not re.search(r'https?://', page)
    assert page.count('<script') == 2  # the payload (data) and the page's one script
    assert 'cmp-call-grid' in page and 'AE.lazyList' in page  # compare.js and compare.css are inlined
    passed = render_comparison_html(compare_documents(support_reports()[0], support_reports()[0]))
    assert '(no regression)</title>' in passed


def test_hostile_text_is_data_never_markup() -> None:
    comparison = hostile_comparison()
    page = render_comparison_html(comparison)
    # The text cannot close the payload's element, open a tag or start a comment.
    assert '<img' not in page
    assert page.count('</script>') == 2
    assert HOSTILE.replace('<', '\\u003c').replace('>', '\\u003e') in page
    payload = read_payload(page)
    assert isinstance(payload, dict)
    assert payload == comparison_payload(comparison)
    case = next(c for c in payload['cases'] if c['name'] == HOSTILE)
    call = case['runs'][1]['timeline']['calls'][0]
    assert (call['name'], call['result'], call['agent_path']) == (HOSTILE, HOSTILE, [HOSTILE])
    assert call['fields'] == [[HOSTILE, '250'], ['note', f'"{HOSTILE}\\u001b[2J\\u202e"']]
    # Terminal controls and bidi overrides are escaped as for every other view (`visible`).
    ok = {r['name']: r for r in case['results']}['ok']
    assert ok['candidate']['reason'] == f'{HOSTILE}\\x1b]0;title\\x07\\u202e'
    assert '\x1b' not in page and '\u202e' not in page and '\x07' not in page
    assert [c['name'] for c in payload['cases']] == [HOSTILE, f'{HOSTILE}-gone', f'{HOSTILE}-new']
    title = re.search('<title>(.*)</title>', page)
    assert title is not None and '<' not in title[1]


def test_lone_surrogates_survive_the_page() -> None:
    comparison = compare_documents(_doc('a', _case('x\ud800', ok=True)), _doc('b', _case('x\ud800', ok=False)))
    page = render_comparison_html(comparison)
    page.encode('utf-8')  # writable as UTF-8
    payload = read_payload(page)
    assert isinstance(payload, dict)
    assert payload['cases'][0]['name'] == 'x\\ud800'  # escaped by `visible`, shown as written


def test_ten_thousand_cases_make_a_compact_page_quickly() -> None:
    comparison = big_comparison()
    started = time.perf_counter()
    page = render_comparison_html(comparison)
    elapsed = time.perf_counter() - started
    assert elapsed < 10, elapsed
    assert 'type="application/gzip-base64"' in page  # large payloads are compressed by the shell
    payload = read_payload(page)
    assert isinstance(payload, dict)
    assert len(payload['cases']) == 10_000
    assert sum('runs' in c for c in payload['cases']) == 100
    assert payload['cases'][0]['name'] == 'case-00099' and payload['cases'][0]['change'] == 'worse'
    assert len(page) < 2_000_000, len(page)


@pytest.mark.parametrize('compress', [True, False])
def test_compression_is_the_callers_choice(compress: bool) -> None:
    page = render_comparison_html(mixed_comparison(), compress=compress)
    assert ('type="application/gzip-base64"' in page) is compress
    assert read_payload(page) == comparison_payload(mixed_comparison())


def test_arguments_are_fields_when_they_are_an_object_and_their_escapes_are_made_visible() -> None:
    texts = [
        '{"to": "\\u202eevil", "n": [1, {"k": null}]}',  # JSON's own escape of a bidi override
        '{"query": "unterminated',  # the model's invalid JSON
        '["a", "list"]',
        None,
        '{}',
    ]

    def case(name: str, text: str | None) -> CaseResult:
        return CaseResult(name=name, timeline=Timeline(calls=[CallSpan('t', 'ok', [], 0.0, 1.0, text)]))

    baseline = _doc('a', *(_case(f'c{i}', ok=True) for i in range(len(texts))))
    candidate = _doc('b', *(case(f'c{i}', text) for i, text in enumerate(texts)))
    payload = comparison_payload(compare_documents(baseline, candidate))
    calls = {c['name']: c['runs'][1]['timeline']['calls'][0] for c in payload['cases']}
    assert (
        calls['c0']['fields'] == [['to', '"\\u202eevil"'], ['n', '[1, {"k": null}]']] and 'arguments' not in calls['c0']
    )
    assert calls['c1'] == {**calls['c1'], 'arguments': '{"query": "unterminated'} and 'fields' not in calls['c1']
    assert calls['c2']['arguments'] == '["a", "list"]'
    assert calls['c3']['arguments'] is None
    assert calls['c4']['fields'] == []


def test_non_finite_numbers_from_a_hand_edited_report_do_not_break_the_page() -> None:
    nan, inf = float('nan'), float('inf')
    odd = CaseResult(
        name='odd',
        metrics={'input_tokens': nan, 'cost': inf},
        duration=nan,
        timeline=Timeline(calls=[CallSpan('t', 'ok', [], nan, inf, '{}')]),
    )
    baseline = _doc('a', _case('odd', ok=True, input_tokens=1))
    candidate = _doc('b', odd)
    page = render_comparison_html(compare_documents(baseline, candidate), compress=False)
    data = page.split('id="payload">', 1)[1].split('</script>', 1)[0]
    assert 'NaN' not in data and 'Infinity' not in data  # JSON has neither: the page could not read it
    payload = read_payload(page)
    assert isinstance(payload, dict)
    run = payload['cases'][0]['runs'][1]
    assert (run['duration'], run['metrics']) == ('nan', {'cost': 'inf', 'input_tokens': 'nan'})
    assert (run['timeline']['calls'][0]['start'], run['timeline']['calls'][0]['end']) == (None, None)
    assert {a['name']: a['candidate'] for a in payload['averages'] if a['kind'] == 'metric'}['input_tokens'] == 'nan'


def token_runs() -> tuple[ReportDocument, ReportDocument]:
    """Case `a` in two runs, each with a zero-token request and one of 5 in / 1 out: the first run's trace
    recorded every request's usage (a real zero), the second's only one (no figure for the other); the
    second run's `search` call failed."""
    requests = [RequestSpan('m', ['agent'], 0.0, 1.0), RequestSpan('m', ['agent'], 1.0, 2.0, 5, 1)]

    def run(name: str, passed: bool, with_tokens: int) -> ReportDocument:
        case = _case('a', ToolCorrectness=passed)
        calls = [
            CallSpan('lookup', 'ok', ['agent'], 0.2, 0.3, arguments='{}'),
            CallSpan('search', 'ok' if passed else 'failed', ['agent'], 1.2, 1.3, arguments='{}'),
        ]
        case.timeline = Timeline(calls=calls, requests=requests)
        case.account = TraceAccount(
            spans=3,
            families=('genai',),
            tool_spans=0,
            arguments_from_spans=0,
            arguments_from_responses=0,
            arguments_missing=0,
            results=0,
            model_spans=2,
            with_tokens=with_tokens,
            issued=0,
            issued_not_run=(),
            run_not_issued=(),
            agents=('agent',),
        )
        return _doc(name, case)

    return run('before', True, 2), run('after', False, 1)


def test_no_token_figures_where_a_run_recorded_none() -> None:
    """A request's tokens are null in a run whose trace recorded none (its account), as in the report."""
    payload = comparison_payload(compare_documents(*token_runs()))
    (case,) = payload['cases']
    tokens = [[(r['input_tokens'], r['output_tokens']) for r in side['timeline']['requests']] for side in case['runs']]
    assert tokens == [[(0, 0), (5, 1)], [(None, None), (5, 1)]]
