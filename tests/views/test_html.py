"""The HTML report as text: one self-contained page, its payload, and hostile text kept as text.

What the page shows in a browser is in `test_html_browser.py`; here, the file: its structure and
policy, the payload the page draws (round trip through the file, compressed or not), and data that
tries to be markup (`</script><img onerror=...>`) or terminal controls.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_evals import Case, Dataset

from agentic_evals import Gates, MaxToolCalls, MinScore, TrajectoryMatch, html_report, write_html_report
from agentic_evals.cli import main
from agentic_evals.reports.document import (
    AgentSpan,
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
from agentic_evals.reports.judge import check_gates
from agentic_evals.trajectory.account import TraceAccount
from agentic_evals.views import html as html_module
from agentic_evals.views.html import (
    FIRST_ROWS,
    LOADED_SELECTOR,
    NO_SPANS,
    OPEN_AT_LOAD,
    OPENED_SELECTOR,
    READY_SELECTOR,
    payload,
    payload_text,
    read_report_payload,
    render_html,
    tokens_recorded,
)
from agentic_evals.views.html_page import (
    COMPRESS_ABOVE,
    PAYLOAD_ID,
    read_parts,
    read_payload,
    render_page,
)
from agentic_evals.views.text import visible

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / 'fixtures' / 'support'
HOSTILE = '</script><img src=x onerror=alert(1)><!-- \x1b]0;pwned\x07\u202eevil\ud800 & </SCRIPT >'


def support_report(tmp_path: Path, variant: str = 'regressed', *flags: str) -> tuple[str, ReportDocument]:
    """The support fixture's run through the real CLI: the HTML page and the JSON document."""
    page, document = tmp_path / f'{variant}.html', tmp_path / f'{variant}.json'
    argv = ['run', str(SUPPORT / 'dataset.yaml'), str(SUPPORT / f'{variant}.otlp.jsonl'), '--no-progress']
    main([*argv, '--html', str(page), '--json', str(document), *flags])
    return page.read_text(encoding='utf-8'), read_document(document)


def test_the_page_is_one_self_contained_file(tmp_path: Path) -> None:
    page, _ = support_report(tmp_path)
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert '<title>support_agent — agentic-evals report</title>' in page
    # nothing to fetch: no links, sources, imports or addresses anywhere in the file
    for needle in ('<link', ' src=', 'src="', '@import', 'url(', 'http://', 'https://', '//cdn', 'fetch('):
        assert needle not in page, needle
    assert len(re.findall('<style>', page)) == 1
    assert re.findall(r'<script[^>]*>', page) == [f'<script type="application/json" id="{PAYLOAD_ID}">', '<script>']
    assert page.count('</script>') == 2


def test_the_policy_allows_only_the_pages_own_style_and_script(tmp_path: Path) -> None:
    page, _ = support_report(tmp_path)
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert policy is not None
    rules = dict(rule.split(' ', 1) for rule in policy[1].split('; '))
    assert rules['default-src'] == "'none'"
    assert 'unsafe' not in policy[1]
    style = re.search('<style>(.*?)</style>', page, re.DOTALL)
    script = re.search(r'<script>(.*?)</script>', page, re.DOTALL)
    assert style is not None and script is not None

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert rules['style-src'] == digest(style[1])
    assert rules['script-src'] == digest(script[1])


def test_the_payload_round_trips_through_the_file(tmp_path: Path) -> None:
    page, document = support_report(tmp_path)
    gates = Gates()
    expected = json.loads(payload_text(payload(document, gates, check_gates(document, gates))))
    assert read_payload(page) == expected
    assert expected['totals'] == {
        'cases': 4,
        'failed': 3,
        'failed_results': 3,
        'case_failures': 0,
        'assertions': 13,
        'failed_assertions': 3,
        'evaluator_errors': 0,
    }
    assert expected['verdict']['passed'] is False
    assert expected['verdict']['gates'][0][:2] == ['assertions', False]
    # failed cases first, then by name
    assert [(c['n'], c['s']) for c in expected['cases']] == [
        ('damaged_escalation', 'fail'),
        ('refund', 'fail'),
        ('shipping_faq', 'fail'),
        ('order_status', 'pass'),
    ]
    refund = expected['cases'][1]
    assert refund['T']['L'] == [['support'], ['support', 'billing']]
    assert [c[1] for c in refund['T']['C']] == ['lookup_order', 'ask_billing', 'get_payment', 'issue_refund']
    assert refund['T']['C'][3][5] == '{"order_id":"A100","amount":250.0}'
    trajectory, arguments = refund['X']
    assert trajectory[:2] == ['support_trajectory', 'TrajectoryMatch']
    assert [row[0] for row in trajectory[3]] == ['matched', 'missing', 'matched']
    assert trajectory[3][1][1] == 'check_refund_policy'
    ((status, expected_call, actual_call, keys, differences),) = arguments[3]
    assert (status, expected_call, actual_call, keys) == (
        'mismatch',
        "issue_refund(amount=25.0, order_id='A100')",
        "issue_refund(amount=250.0, order_id='A100')",
        ['amount'],
    )
    assert len(differences) == 1 and differences[0].startswith("key 'amount': expected 25")


def test_the_summary_shows_each_gate_and_the_run_metrics(tmp_path: Path) -> None:
    page, _ = support_report(tmp_path, 'regressed', '--min-score', 'TrajectoryMatch=0.5', '--max-metric', 'requests=3')
    data: Any = read_payload(page)
    assert [gate[:2] for gate in data['verdict']['gates']] == [
        ['assertions', False],
        ['min-score TrajectoryMatch', True],
        ['max-metric requests', False],
    ]
    assert ['TrajectoryMatch', 'score', '0.556', 'average >= 0.500', 1] in data['averages']
    assert ['ArgumentCorrectness', 'assertion', '33.3% (1/3)', 'all must pass', 0] in data['averages']
    assert [row[0] for row in data['metrics']] == ['requests', 'input_tokens', 'output_tokens', 'duration']
    assert data['metrics'][0][1:] == ['3.8', 4]


def test_a_score_below_a_per_case_gate_fails_its_case(tmp_path: Path) -> None:
    page, _ = support_report(tmp_path, 'regressed', '--min-case-score', 'TrajectoryMatch=0.6')
    data: Any = read_payload(page)
    assert (data['totals']['failed'], data['totals']['failed_results']) == (4, 3)
    status = next(c for c in data['cases'] if c['n'] == 'order_status')
    assert status['s'] == 'fail'
    (row,) = [r for r in status['R'] if r[1] == 'TrajectoryMatch']
    assert row[2] == 0.5 and row[5] == 1  # marked: below the per-case gate
    assert not any(r[5] for r in status['R'] if r[1] != 'TrajectoryMatch')


def hostile_document() -> ReportDocument:
    timeline = Timeline(
        agents=[AgentSpan(HOSTILE, [HOSTILE], 0.0, 1.0)],
        calls=[
            CallSpan(HOSTILE, 'failed', [HOSTILE], 0.1, 0.2, arguments=HOSTILE, result=HOSTILE, failure_stage=HOSTILE)
        ],
        requests=[RequestSpan(HOSTILE, [HOSTILE], 0.0, 0.1, 5, 6)],
    )
    case = CaseResult(
        name=HOSTILE,
        inputs={HOSTILE: HOSTILE},
        output=HOSTILE,
        scores={HOSTILE: ScoreResult(0.5, HOSTILE, HOSTILE)},
        assertions={'ok': AssertionResult(False, HOSTILE, HOSTILE)},
        labels={'label': LabelResult(HOSTILE, HOSTILE)},
        metrics={HOSTILE: 1},
        evaluator_errors=[EvaluatorError(HOSTILE, HOSTILE, HOSTILE)],
        timeline=timeline,
        alignments=[Alignment(HOSTILE, HOSTILE, [AlignedCall('mismatch', HOSTILE, HOSTILE, [HOSTILE], [HOSTILE])])],
    )
    return ReportDocument(name=HOSTILE, cases=[case], failures=[CaseFailure(HOSTILE, HOSTILE)]).with_derived()


def test_hostile_text_stays_text() -> None:
    document = hostile_document()
    gates = Gates()
    page = render_html(document, gates, check_gates(document, gates))
    # The data cannot close the payload's element, open a comment or start a tag anywhere
    assert page.count('</script>') == 2
    assert re.findall('</script', page, flags=re.IGNORECASE) == ['</script', '</script']
    for needle in ('<img', '<!--', '\x1b', '\u202e', '\x07'):
        assert needle not in page, repr(needle)
    assert '<title>&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&lt;!-- \\x1b]0;pwned\\x07\\u202eevil' in page
    # ... and reads back as the text `visible` shows
    data: Any = read_payload(page)
    shown = visible(HOSTILE)
    assert shown == '</script><img src=x onerror=alert(1)><!-- \\x1b]0;pwned\\x07\\u202eevil\\ud800 & </SCRIPT >'
    assert data['name'] == shown
    case = next(c for c in data['cases'] if 'F' not in c)
    assert case['n'] == shown
    assert case['R'][0] == ['s', shown, 0.5, shown, shown, 0]
    assert case['m'] == {shown: 1, 'duration': 0.0}
    # inputs are shown as their JSON text: controls as JSON escapes, the rest made visible
    assert case['in'] == visible(json.dumps({HOSTILE: HOSTILE}, ensure_ascii=False, separators=(',', ':')))
    assert '\\u001b]0;pwned\\u0007\\u202eevil\\ud800' in case['in']
    call = case['T']['C'][0]
    assert call[1] == call[5] == call[6] == call[7] == shown
    assert case['T']['L'] == [[shown]]
    assert case['X'][0][3][0] == ['mismatch', shown, shown, [shown], [shown]]
    failure = next(c for c in data['cases'] if 'F' in c)
    assert failure['n'] == failure['F'] == shown


def test_payload_text_shows_every_character_as_visible_does() -> None:
    """Every code point, next to backslashes and JSON escapes: the two-pass rewrite equals `visible`."""
    everything = ''.join(f'{chr(c)}\\{chr(c)}\\u0001|' for c in range(0x110000))
    samples = [everything, '\\', '\\\\x', '\\b\\f\\r\b\f\r\t\n', '\\u001b\x1b\\\x1b', '\u2028\u2029\x7f\x85\ufffe']
    assert json.loads(payload_text({s: [s] for s in samples})) == {visible(s): [visible(s)] for s in samples}


def test_non_finite_numbers_are_null() -> None:
    assert payload_text({'a': [float('nan'), 1.5, {'b': float('inf')}]}) == '{"a":[null,1.5,{"b":null}]}'


def test_a_large_payload_is_compressed_and_reads_back() -> None:
    big = {'cases': [{'n': f'case {i}', 'r': 'x' * 100} for i in range(COMPRESS_ABOVE // 100)]}
    page = render_page('big', big)
    assert '<script type="application/gzip-base64" id="payload">' in page
    assert len(page) < COMPRESS_ABOVE // 4
    assert read_payload(page) == big
    small = render_page('small', {'a': '</script>'})
    assert '<script type="application/json" id="payload">{"a":"\\u003c/script\\u003e"}</script>' in small
    wide = render_page('wide', {'é': '&\u2028\u2029\ud800>'})
    assert '{"é":"\\u0026\\u2028\\u2029\\ud800\\u003e"}</script>' in wide
    assert read_payload(wide) == {'é': '&\u2028\u2029\ud800>'}
    assert read_payload(render_page('forced', {'a': 1}, compress=True)) == {'a': 1}


def test_the_page_code_may_not_close_its_own_element() -> None:
    with pytest.raises(ValueError, match='closing tag'):
        render_page('t', {}, js=['let s = "</script>";'])
    with pytest.raises(ValueError, match='closing tag'):
        render_page('t', {}, css=['/* </style> */'])


def test_the_ready_selector_is_what_the_page_sets() -> None:
    from agentic_evals.views.html_page import asset

    assert READY_SELECTOR == 'body[data-ready]'
    assert "document.body.dataset.ready = ''" in asset('report.js')
    assert LOADED_SELECTOR == 'body[data-loaded]'
    assert "document.body.dataset.loaded = ''" in asset('report.js')
    assert OPENED_SELECTOR == 'body[data-opened]'
    assert "document.body.dataset.opened = ''" in asset('report.js')


def _large(cases: int) -> ReportDocument:
    """`cases` cases of about 10 KB each, one in ten failing, with a timeline of two calls."""
    results = []
    for i in range(cases):
        calls = [
            CallSpan(f'tool_{k}', 'ok', ['agent'], 0.1 * k, 0.1 * k + 0.05, arguments='{"q": "%s"}' % ('x' * 5000))
            for k in range(2)
        ]
        timeline = Timeline(agents=[AgentSpan('agent', ['agent'], 0.0, 0.3)], calls=calls)
        failed = i % 10 == 3
        results.append(
            CaseResult(
                f'case {i:04d}',
                assertions={'fine': AssertionResult(not failed, 'reason')},
                duration=0.3,
                timeline=timeline,
            )
        )
    return ReportDocument(name='large', cases=results).with_derived()


def test_a_large_report_is_split_so_its_summary_and_first_rows_come_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """More than FIRST_ROWS cases: the page's payload holds the summary and the first rows' list data,
    uncompressed, before the page's one script; every case follows it in parts, compressed when large."""
    monkeypatch.setattr(html_module, 'PART_CASES', 120)
    document = _large(250)
    gates = Gates()
    verdict = check_gates(document, gates)
    page = render_html(document, gates, verdict)
    tags = re.findall(r'<script[^>]*>', page)
    assert tags == [
        f'<script type="application/json" id="{PAYLOAD_ID}">',
        '<script>',
        '<script type="application/gzip-base64" class="payload-part">',  # 120 cases: about 1.2 MB of JSON
        '<script type="application/gzip-base64" class="payload-part">',
        '<script type="application/json" class="payload-part">',  # the last 10: small
    ]
    head: Any = read_payload(page)
    assert 'cases' not in head
    assert head['count'] == 250
    assert head['totals']['cases'] == 250
    assert len(head['rows']) == FIRST_ROWS
    assert [row['n'] for row in head['rows'][:5]] == ['case 0003', 'case 0013', 'case 0023', 'case 0033', 'case 0043']
    assert head['rows'][OPEN_AT_LOAD] == {'n': 'case 0033', 's': 'fail', 'b': [None, ['fine'], 2, 0.3]}
    assert [len(part) for part in read_parts(page)] == [120, 120, 10]  # type: ignore[arg-type]
    whole = json.loads(payload_text(payload(document, gates, verdict)))
    assert read_report_payload(page) == whole
    assert [row['n'] for row in head['rows']] == [c['n'] for c in whole['cases'][:FIRST_ROWS]]
    # the failed cases open at load are there whole, so they show before the parts are read; the rest
    # are list data only
    assert head['open'] == OPEN_AT_LOAD
    assert head['rows'][:OPEN_AT_LOAD] == whole['cases'][:OPEN_AT_LOAD]
    assert all(set(row) == {'n', 's', 'b'} for row in head['rows'][OPEN_AT_LOAD:])
    # the one script the policy allows is the page's own, as it stands between the head and the parts
    policy = re.search(r"script-src '([^']+)'", page)
    script = re.search(r'<script>(.*?)</script>', page, re.DOTALL)
    assert policy is not None and script is not None
    assert policy[1] == 'sha256-' + base64.b64encode(hashlib.sha256(script[1].encode()).digest()).decode()
    # the same page again, byte for byte (the parts are compressed in threads)
    assert render_html(document, gates, verdict) == page


def test_a_report_of_the_first_rows_only_is_not_split() -> None:
    document = _large(FIRST_ROWS)
    page = render_html(document, Gates(), check_gates(document, Gates()))
    assert read_parts(page) == []
    data: Any = read_payload(page)
    assert len(data['cases']) == FIRST_ROWS and 'rows' not in data
    assert read_report_payload(page) == data


def test_timeline_times_are_whole_microseconds_and_null_when_not_finite() -> None:
    calls = [CallSpan('a', 'ok', ['agent'], 0.1234564, 1.5), CallSpan('b', 'ok', ['agent'], float('nan'), float('inf'))]
    requests = [RequestSpan('m', ['agent'], 0.0, 2.0000004, 1, 2)]
    timeline = Timeline(agents=[AgentSpan('agent', ['agent'], 0.0, 2.5)], calls=calls, requests=requests)
    document = ReportDocument(name='t', cases=[CaseResult('c', timeline=timeline)]).with_derived()
    data: Any = read_payload(render_html(document, Gates(), check_gates(document, Gates())))
    (case,) = data['cases']
    assert case['T']['A'] == [[0, 0, 2_500_000]]
    assert [call[3:5] for call in case['T']['C']] == [[123_456, 1_500_000], [None, None]]
    assert case['T']['Q'][0][2:4] == [0, 2_000_000]


def _account(model_spans: int, with_tokens: int) -> TraceAccount:
    return TraceAccount(
        spans=model_spans + 1,
        families=('genai',),
        tool_spans=0,
        arguments_from_spans=0,
        arguments_from_responses=0,
        arguments_missing=0,
        results=0,
        model_spans=model_spans,
        with_tokens=with_tokens,
        issued=0,
        issued_not_run=(),
        run_not_issued=(),
        agents=('agent',),
    )


def test_a_request_shows_tokens_only_where_its_trace_recorded_them() -> None:
    """Counts above zero were recorded; zeros only when the account says every request recorded its usage
    (never inferred from zero where the account tells): else the page gets null and shows no figure."""
    counted, zero = RequestSpan('m', ['agent'], 0.0, 1.0, 12, 3), RequestSpan('m', ['agent'], 1.0, 2.0)
    assert tokens_recorded(counted, None) and tokens_recorded(counted, _account(2, 0))
    assert tokens_recorded(zero, _account(2, 2))  # every request recorded usage: a real zero
    assert not tokens_recorded(zero, _account(2, 0))  # the trace recorded no tokens
    assert not tokens_recorded(zero, _account(2, 1))  # tokens per agent run only (Mastra's bridge)
    assert not tokens_recorded(zero, _account(0, 0)) and not tokens_recorded(zero, None)
    timeline = Timeline(agents=[AgentSpan('agent', ['agent'], 0.0, 2.0)], requests=[counted, zero])
    cases = [
        CaseResult(name, timeline=timeline, account=account)
        for name, account in (('all', _account(2, 2)), ('none', _account(2, 0)), ('some', _account(2, 1)))
    ]
    document = ReportDocument(name='tokens', cases=cases).with_derived()
    data: Any = read_payload(render_html(document, Gates(), check_gates(document, Gates())))
    tokens = {case['n']: [q[4:6] for q in case['T']['Q']] for case in data['cases']}
    assert tokens == {'all': [[12, 3], [0, 0]], 'none': [[12, 3], [None, None]], 'some': [[12, 3], [None, None]]}


def test_a_trace_without_tokens_has_no_token_figures_run_or_read_back(tmp_path: Path) -> None:
    """OpenLLMetry's OpenAI Agents trace records no usage: `run --html` and a page made again from the JSON
    report (which keeps the account) both give its requests null tokens."""
    evaluators = tmp_path / 'evaluators.yaml'
    evaluators.write_text('evaluators:\n- MaxToolCalls: 10\n', encoding='utf-8')
    traces = ROOT / 'fixtures' / 'frameworks' / 'openai_agents' / 'openllmetry.otlp.jsonl'
    page, path = tmp_path / 'report.html', tmp_path / 'report.json'
    argv = ['run', '--evaluators', str(evaluators), str(traces), '--no-progress', '--quiet']
    assert main([*argv, '--html', str(page), '--json', str(path)]) == 0
    document = read_document(path)
    (case,) = document.cases
    assert case.account is not None and (case.account.model_spans, case.account.with_tokens) == (6, 0)
    again = render_html(document, Gates(), check_gates(document, Gates()))
    for text in (page.read_text(encoding='utf-8'), again):
        (entry,) = read_report_payload(text)['cases']
        assert [q[4:6] for q in entry['T']['Q']] == [[None, None]] * 6


def test_the_assets_ship_in_the_package() -> None:
    """Package data next to the modules (hatch puts every file under agentic_evals/ in the wheel)."""
    folder = ROOT / 'agentic_evals' / 'views' / 'html_assets'
    assert {p.name for p in folder.iterdir()} >= {'base.css', 'page.js', 'report.css', 'report.js'}
    tracked = subprocess.run(['git', 'ls-files', str(folder)], capture_output=True, text=True, cwd=ROOT, check=False)
    if tracked.returncode == 0:  # a git checkout: the files are committed, so a built wheel has them
        assert {Path(line).name for line in tracked.stdout.split()} >= {
            'base.css',
            'page.js',
            'report.css',
            'report.js',
        }


def test_no_data_reaches_the_page_as_markup() -> None:
    """The page's scripts build every element through AE.h (textContent); none assigns markup."""
    from agentic_evals.views.html_page import asset

    for name in ('page.js', 'report.js'):
        code = asset(name)
        for needle in ('innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function'):
            assert needle not in code.replace("'innerHTML', 'outerHTML'", ''), (name, needle)


# -- the Python call -----------------------------------------------------------------------------------


def _dataset() -> Dataset[str, str, Any]:
    return Dataset[str, str, Any](
        name='calls',
        cases=[Case(name='one', inputs='a'), Case(name='two', inputs='b')],
        evaluators=[TrajectoryMatch(['lookup']), MaxToolCalls(3)],
    )


def test_without_spans_every_result_is_shown_and_each_case_says_why_there_is_no_timeline(tmp_path: Path) -> None:
    report = _dataset().evaluate_sync(lambda text: text.upper(), progress=False)
    page = html_report(report)
    data: Any = read_payload(page)
    assert data['no_timeline'] == NO_SPANS
    assert [c['n'] for c in data['cases']] == ['one', 'two']
    for case in data['cases']:
        assert 'T' not in case
        assert {r[1] for r in case['R']} == {'TrajectoryMatch', 'MaxToolCalls'}
    gated = html_report(report, gates=Gates(min_scores=(MinScore('TrajectoryMatch', 0.5),)))
    gated_data: Any = read_payload(gated)
    assert [g[0] for g in gated_data['verdict']['gates']] == ['assertions', 'min-score TrajectoryMatch']
    assert gated_data['verdict']['gates'][1][2] == 'TrajectoryMatch average 0.000 < 0.500'
    written = write_html_report(report, tmp_path / 'report.html')
    assert written == tmp_path / 'report.html'
    assert read_payload(written.read_text(encoding='utf-8')) == data


IN_PROCESS = """
import sys
from typing import Any
import logfire
from pydantic_evals import Case, Dataset
from support_agent import run_support_case_async
from agentic_evals import MaxToolCalls, TrajectoryMatch, capture, write_html_report

logfire.configure(send_to_logfire=False, console=False)


async def task(name: str) -> str:
    return await run_support_case_async(name, variant='regressed')


dataset = Dataset[str, str, Any](
    name='support',
    cases=[Case(name='refund', inputs='refund'), Case(name='order_status', inputs='order_status')],
    evaluators=[TrajectoryMatch(['lookup_order', 'check_refund_policy', 'ask_billing']), MaxToolCalls(5)],
)
with capture() as captured:
    report = dataset.evaluate_sync(task, progress=False)
write_html_report(report, sys.argv[1], spans=captured)
write_html_report(report, sys.argv[2], spans=captured.spans)
"""


@pytest.mark.slow
def test_spans_from_capture_give_each_case_its_timeline(tmp_path: Path) -> None:
    import os

    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT / 'fixtures'), str(ROOT)])}
    first, second = tmp_path / 'a.html', tmp_path / 'b.html'
    argv = [sys.executable, '-c', IN_PROCESS, str(first), str(second)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    data: Any = read_payload(first.read_text(encoding='utf-8'))
    assert read_payload(second.read_text(encoding='utf-8')) == data
    refund = next(c for c in data['cases'] if c['n'] == 'refund')
    assert refund['T']['L'] == [['support'], ['support', 'billing']]
    assert [c[1] for c in refund['T']['C']] == ['lookup_order', 'ask_billing', 'get_payment', 'issue_refund']
    (alignment,) = refund['X']
    rows = [row[:3] for row in alignment[3]]
    assert rows[:3] == [
        ['matched', 'lookup_order'],  # the actual call reads the same
        ['missing', 'check_refund_policy', None],
        ['matched', 'ask_billing'],
    ]
