"""The report writers in pieces (issue 12): the same text as before, and memory that does not grow with the cases.

Each writer's chunks are compared with the text the writers made whole before they were streamed:
files in `streamed_data/` written by those writers for `sample()` (the JSON, the JUnit XML and the
Markdown), and for real reports (the CLI on the bundled support fixtures) the old algorithms where
they are short (the JSON's one `json.dumps`, the HTML page's one payload split into parts). Then a
document of 20,000 generated cases that are made afresh on every pass (`Streamed`, which fails any
writer that indexes it) is written by each writer under `tracemalloc`, whose peak must stay far
below the size of the file written (marked slow: tracemalloc makes each writer several times slower).
"""

from __future__ import annotations

import json
import math
import tracemalloc
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast, overload

import pytest

from agentic_evals.cli import main
from agentic_evals.cli.common import UsageError, write_chunks, write_text
from agentic_evals.otlp_encoding import key_values
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
    document_chunks,
    dump_document,
    read_document,
)
from agentic_evals.reports.events import evaluation_events
from agentic_evals.reports.gates import Gates, MaxMetric, MinScore
from agentic_evals.reports.judge import check_gates
from agentic_evals.reports.verdict import Verdict
from agentic_evals.views import html as html_module
from agentic_evals.views import markdown as markdown_module
from agentic_evals.views import otlp_export as otel_events
from agentic_evals.views.html import html_chunks, payload, payload_text, read_report_payload, render_html
from agentic_evals.views.html_page import asset, render_page
from agentic_evals.views.junit import junit_chunks, render_junit
from agentic_evals.views.markdown import markdown_chunks, render_markdown
from agentic_evals.views.otlp_export import emit_otlp, otlp_json_line_chunks
from agentic_evals.views.text import visible

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / 'streamed_data'
SUPPORT = ROOT / 'fixtures' / 'support'
NOW = 1_700_000_000_000_000_000
T = TypeVar('T')


class Streamed(Sequence[T]):
    """Items made afresh on every pass, as the disk-backed cases of a streamed report are: nothing holds them.

    `passes` counts the iterations; indexing fails the test (a writer must not hold or seek cases).
    """

    def __init__(self, size: int, make: Callable[[int], T]) -> None:
        self.size = size
        self.make = make
        self.passes = 0

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        raise AssertionError('a writer indexed the cases')

    def __iter__(self) -> Iterator[T]:
        self.passes += 1
        return (self.make(i) for i in range(self.size))


def generated_case(i: int) -> CaseResult:
    """A case with every kind of result, text to escape, a timeline and an alignment (its index picks the outcomes)."""
    return CaseResult(
        name=f'case {i:06d} <&> *x* \ud800',
        inputs={'question': f'what is {i}?\nsay', 'nan': float('nan') if i % 9 == 0 else 1.5},
        output=f'answer {i}: ' + 'words and more words ' * 4,
        scores={
            'Score': ScoreResult(None if i % 13 == 0 else (i % 10) / 10, f'reason {i} | with `code`', 'Scorer'),
            'Other': ScoreResult(0.5, None, 'Other'),
        },
        assertions={'Check': AssertionResult(i % 4 != 0, 'failed because <b>' if i % 4 == 0 else None, 'Checker')},
        labels={'Risk': LabelResult('high' if i % 2 else 'low', None, 'Risk')},
        metrics={'requests': i % 5, 'cost': 0.01 * (i % 7)} if i % 6 else {},
        evaluator_errors=[EvaluatorError('Judge', 'RuntimeError: backend down\nretry later', 'Judge')]
        if i % 17 == 0
        else [],
        duration=0.125 * (i % 8),
        trace_id=f'{i + 1:032x}',
        span_id=f'{i + 1:016x}' if i % 3 else None,
        timeline=Timeline(
            agents=[AgentSpan('agent', ['agent'], 0.0, 1.0)],
            calls=[CallSpan('search', 'failed' if i % 5 == 0 else 'ok', ['agent'], 0.1, 0.2, '{"q": 1}', 'found')],
            requests=[RequestSpan('model', ['agent'], 0.0, 0.1, 10, 20, 0.001)],
        )
        if i % 2
        else None,
        alignments=[Alignment('Check', 'Checker', [AlignedCall('matched', 'search()', 'search()')])] if i % 2 else [],
    )


def generated_failure(i: int) -> CaseFailure:
    return CaseFailure(f'ghost {i:04d}', f'no trace for case {i}\nanywhere', inputs={'i': i})


def documents(cases: int, failures: int = 3) -> tuple[ReportDocument, ReportDocument]:
    """The same report twice: cases in lists, and cases `Streamed` (with the averages and totals of the first)."""
    whole = ReportDocument(
        name='generated <report> \ud83d',
        cases=[generated_case(i) for i in range(cases)],
        failures=[generated_failure(i) for i in range(failures)],
    ).with_derived()
    streamed = replace(
        whole,
        cases=cast(Any, Streamed(cases, generated_case)),
        failures=cast(Any, Streamed(failures, generated_failure)),
    )
    return whole, streamed


def sample() -> ReportDocument:
    """The report the files in `streamed_data/` were written from (by the writers before they streamed)."""
    return documents(40)[0]


SAMPLE_GATES = Gates(
    False,
    (MinScore('Score', 0.6), MinScore('Check', 0.9)),
    0.2,
    min_case_scores=(MinScore('Score', 0.2), MinScore('Missing', 0.5)),
    max_metrics=(MaxMetric('cost', 0.02),),
    max_case_metrics=(MaxMetric('requests', 3), MaxMetric('duration', 0.5)),
)
GATES = {'default': Gates(), 'allowed': Gates(allow_failures=True), 'gated': SAMPLE_GATES}


def verdict_of(document: ReportDocument, gates: Gates) -> Verdict:
    return check_gates(document, gates, known_names={'Missing'})


# -- the same text as before -------------------------------------------------------------------------


def old_dump_document(document: ReportDocument) -> str:
    """`dump_document` before it was streamed: the whole document through one `json.dumps`."""
    from agentic_evals.reports.document import _ADAPTER, _null_non_finite

    text = json.dumps(_null_non_finite(_ADAPTER.dump_python(document)), indent=2, ensure_ascii=False)
    return ''.join(f'\\u{ord(c):04x}' if 0xD800 <= ord(c) <= 0xDFFF else c for c in text) + '\n'


def old_render_html(document: ReportDocument, gates: Gates, verdict: Verdict) -> str:
    """`render_html` before it was streamed: the whole payload, then its summary and its parts."""
    data = payload(document, gates, verdict)
    cases = data['cases']
    parts: list[str] = []
    if len(cases) > html_module.FIRST_ROWS:
        data = {key: value for key, value in data.items() if key != 'cases'}
        data['count'] = len(cases)
        data['rows'] = [
            c if place < html_module.OPEN_AT_LOAD and c['s'] == 'fail' else {'n': c['n'], 's': c['s'], 'b': c['b']}
            for place, c in enumerate(cases[: html_module.FIRST_ROWS])
        ]  # the failed cases opened at load whole
        step = html_module.PART_CASES
        parts = [payload_text(cases[i : i + step]) for i in range(0, len(cases), step)]
    title = f'{visible(document.name, newlines=False)} — agentic-evals report'
    css, js = [asset('report.css')], [asset('report.js')]
    return render_page(title, payload_text(data), parts=parts, css=css, js=js, body=html_module._SKELETON)


@pytest.mark.parametrize('gates', list(GATES), ids=list(GATES))
def test_the_junit_xml_and_markdown_are_what_the_whole_text_writers_wrote(gates: str) -> None:
    document = sample()
    verdict = verdict_of(document, GATES[gates])
    junit = ''.join(junit_chunks(document, GATES[gates], verdict))
    assert junit == (DATA / f'{gates}.junit.xml').read_text(encoding='utf-8')
    markdown = ''.join(markdown_chunks(document, GATES[gates], verdict))
    assert markdown == (DATA / f'{gates}.summary.md').read_text(encoding='utf-8')


def test_the_json_is_what_the_whole_text_writer_wrote() -> None:
    text = ''.join(document_chunks(sample()))
    assert text == (DATA / 'report.json').read_text(encoding='utf-8') == old_dump_document(sample())
    empty = ReportDocument(name='empty')
    assert ''.join(document_chunks(empty)) == old_dump_document(empty)


@pytest.fixture(scope='module')
def real(tmp_path_factory: pytest.TempPathFactory) -> ReportDocument:
    """The regressed support run, read back from the CLI's JSON report (timelines and alignments in)."""
    path = tmp_path_factory.mktemp('real') / 'report.json'
    argv = ['run', str(SUPPORT / 'dataset.yaml'), str(SUPPORT / 'regressed.otlp.jsonl'), '--json', str(path)]
    assert main([*argv, '--no-progress', '--quiet']) in (0, 1)
    return read_document(path)


def many(document: ReportDocument, copies: int) -> ReportDocument:
    """`copies` of every case of `document`, each named apart: more than one part of the HTML page."""
    cases = [replace(c, name=f'{c.name} {k}') for k in range(copies) for c in document.cases]
    return replace(document, cases=cases).with_derived()


@pytest.mark.parametrize('copies', [1, 60], ids=['as run', 'copied past the first rows'])
def test_every_writer_writes_a_real_report_as_before(real: ReportDocument, copies: int) -> None:
    document = many(real, copies)
    assert any(c.timeline for c in document.cases) and any(c.alignments for c in document.cases)
    names = document.result_names()
    for gates in (
        Gates(),
        Gates(True, tuple(MinScore(n, 0.9) for n in sorted(names['scores'])), 0.1),
        Gates(min_case_scores=tuple(MinScore(n, 0.9) for n in sorted(names['scores'] | names['assertions']))),
    ):
        verdict = check_gates(document, gates)
        streamed = replace(document, cases=cast(Any, Streamed(len(document.cases), document.cases.__getitem__)))
        assert ''.join(document_chunks(streamed)) == old_dump_document(document)
        assert ''.join(html_chunks(streamed, gates, verdict)) == old_render_html(document, gates, verdict)
        assert ''.join(junit_chunks(streamed, gates, verdict)) == render_junit(document, gates, verdict)
        assert ''.join(markdown_chunks(streamed, gates, verdict)) == render_markdown(document, gates, verdict)
        lines = ''.join(otlp_json_line_chunks(streamed, time_unix_nano=NOW))
        assert lines == otel_events.render_otlp_json_lines(document, time_unix_nano=NOW)


def test_the_junit_xml_is_the_whole_tree_indented(real: ReportDocument) -> None:
    """What `ET.indent` and `ET.tostring` make of the tree the chunks spell (as the writer made it before)."""
    for document in (real, ReportDocument(name='no cases').with_derived()):
        gates = Gates()
        text = ''.join(junit_chunks(document, gates, check_gates(document, gates)))
        tree = ET.fromstring(text.split('\n', 1)[1])
        for element in tree.iter():
            element.text = element.text if len(element) == 0 else None
            element.tail = None
        ET.indent(tree)
        assert text == '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(tree, encoding='unicode') + '\n'


def test_the_html_page_of_many_cases_is_the_page_of_its_whole_payload() -> None:
    """Past `FIRST_ROWS` cases, sorted on disk in runs merged back (some of them merged first), parts compressed."""
    whole, streamed = documents(2300)
    for case in whole.cases[::3]:
        case.output = 'long output <&> \u2028 ' * 300  # parts past COMPRESS_ABOVE: compressed
    streamed = replace(streamed, cases=cast(Any, Streamed(len(whole.cases), whole.cases.__getitem__)))
    verdict = verdict_of(whole, SAMPLE_GATES)
    old = html_module.MERGE_RUNS
    html_module.MERGE_RUNS = 2  # a run per PART_CASES cases: 5 runs, merged two at a time first
    try:
        page = ''.join(html_chunks(streamed, SAMPLE_GATES, verdict))
    finally:
        html_module.MERGE_RUNS = old
    assert page == old_render_html(whole, SAMPLE_GATES, verdict)
    assert 'application/gzip-base64' in page
    assert read_report_payload(page) == json.loads(payload_text(payload(whole, SAMPLE_GATES, verdict)))


def test_the_otlp_lines_hold_every_event_in_requests_of_a_thousand() -> None:
    whole, streamed = documents(700)  # 2,800 results and 42 errors
    lines = list(otlp_json_line_chunks(streamed, time_unix_nano=NOW))
    assert [line.count('"logRecords"') for line in lines] == [1, 1, 1]
    records = [r for line in lines for r in json.loads(line)['resourceLogs'][0]['scopeLogs'][0]['logRecords']]
    assert [len(json.loads(line)['resourceLogs'][0]['scopeLogs'][0]['logRecords']) for line in lines] == [
        1000,
        1000,
        len(records) - 2000,
    ]
    events = evaluation_events(whole)
    assert [r['attributes'] for r in records] == [key_values(e.attributes) for e in events]
    assert all(line.endswith('\n') and line.count('\n') == 1 for line in lines)


def test_write_otlp_json_lines_counts_the_events(tmp_path: Path) -> None:
    whole, streamed = documents(300)
    path = tmp_path / 'events.jsonl'
    count = otel_events.write_otlp_json_lines(streamed, path, time_unix_nano=NOW)
    assert count == len(evaluation_events(whole))
    assert path.read_text(encoding='utf-8') == otel_events.render_otlp_json_lines(whole, time_unix_nano=NOW)


SUCCESS: Any = vars(otel_events)['_Result'].SUCCESS
"""What an exporter returns for a batch sent (the SDK's enum, named differently across its versions)."""


class CountingExporter:
    """Takes every batch; remembers their sizes."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def export(self, batch: Sequence[Any]) -> Any:
        self.batches.append(len(batch))
        return SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def test_emit_sends_more_events_than_its_window_in_full_requests() -> None:
    whole, streamed = documents(6000, failures=0)  # 24,000 results and 353 errors: three windows
    exporter = CountingExporter()
    assert emit_otlp(streamed, exporter=exporter, timeout=30, time_unix_nano=NOW) == []  # type: ignore[arg-type]
    total = len(evaluation_events(whole))
    assert total > 2 * otel_events.WINDOW
    assert sum(exporter.batches) == total
    assert max(exporter.batches) == otel_events.MAX_RECORDS_PER_REQUEST
    assert cast(Streamed[CaseResult], streamed.cases).passes == 2  # one to count, one to send


# -- the Markdown of a large run ---------------------------------------------------------------------


def test_a_markdown_summary_of_more_than_50_cases_lists_the_first_20_failing_cases() -> None:
    whole, streamed = documents(200)
    verdict = verdict_of(whole, Gates())
    text = ''.join(markdown_chunks(streamed, Gates(), verdict))
    failing = sum(bool(markdown_module._case_attention(c, Gates())) for c in whole.cases) + 3
    assert failing > 20
    attention, matrix = text.split('<details>')
    rows = [line for line in attention.splitlines() if line.startswith('| case ')]
    assert len({row.split(' | ')[0] for row in rows}) == 20
    total_rows = sum(len(markdown_module._case_attention(c, Gates())) for c in whole.cases) + 3
    assert f'### Needs attention ({total_rows})' in attention
    assert f'The results of the first 20 of {failing} failing cases are listed' in attention
    assert "<summary>The failing cases' results: 20 of 203 case(s)</summary>" in matrix
    assert len([line for line in matrix.splitlines() if line.startswith('| case ')]) == 20
    assert f'The first 20 of the {failing} failing cases (of 203) are listed here' in matrix
    assert text == render_markdown(whole, Gates(), verdict)


def test_a_markdown_summary_of_50_cases_lists_them_all() -> None:
    whole, _ = documents(50, failures=0)
    text = render_markdown(whole, Gates(), verdict_of(whole, Gates()))
    assert '<summary>All results: 50 case(s)</summary>' in text and 'are listed' not in text
    assert len([line for line in text.split('<details>')[1].splitlines() if line.startswith('| case ')]) == 50


def test_a_large_passing_run_says_none_needs_attention() -> None:
    cases = [CaseResult(name=f'c{i}', assertions={'ok': AssertionResult(True)}) for i in range(60)]
    document = ReportDocument(name='fine', cases=cases).with_derived()
    text = render_markdown(document, Gates(), check_gates(document, Gates()))
    assert 'Needs attention' not in text
    assert 'None of the 60 cases needs attention, so none is listed here' in text
    assert '| c1 |' not in text


# -- write_chunks --------------------------------------------------------------------------------------


def test_write_chunks_writes_every_chunk_with_surrogates_escaped(tmp_path: Path) -> None:
    path = tmp_path / 'out.txt'
    write_chunks(path, iter(['one ', 'lone \ud800', '', ' end\n']))
    assert path.read_bytes() == b'one lone \\ud800 end\n'
    write_text(path, 'two\n')
    assert path.read_text(encoding='utf-8') == 'two\n'


def test_a_failure_making_the_chunks_keeps_the_old_report_and_is_raised_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / 'report.txt'
    path.write_text('old report\n', encoding='utf-8')

    def chunks() -> Iterator[str]:
        yield 'new '
        raise ValueError('a bug in a view')

    with pytest.raises(ValueError, match='a bug in a view'):
        write_chunks(path, chunks())
    assert path.read_text(encoding='utf-8') == 'old report\n'
    assert [p.name for p in tmp_path.iterdir()] == ['report.txt']


def test_a_failure_writing_the_chunks_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / 'report.txt'
    path.write_text('old report\n', encoding='utf-8')
    from agentic_evals.cli import common

    def full(file: Any, chunks: Iterable[str]) -> None:
        raise OSError(28, 'No space left on device')

    monkeypatch.setattr(common, '_write_all', full)
    with pytest.raises(UsageError, match=r'report\.txt: cannot write: No space left on device$'):
        write_chunks(path, ['new'])
    assert path.read_text(encoding='utf-8') == 'old report\n'
    assert [p.name for p in tmp_path.iterdir()] == ['report.txt']


# -- memory ------------------------------------------------------------------------------------------

CASES = 5_000
"""Enough cases for holding them to show (each writer's units are made small below to match)."""


@pytest.fixture
def small_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts, lines and windows of a tenth their size: 2,000 cases then weigh as 20,000 do, in a tenth the time."""
    monkeypatch.setattr(html_module, 'PART_CASES', 50)
    monkeypatch.setattr(otel_events, 'MAX_RECORDS_PER_REQUEST', 100)
    monkeypatch.setattr(otel_events, 'WINDOW', 1_000)


def _written(tmp_path: Path, name: str, chunks: Callable[[], Iterable[str]]) -> tuple[int, int]:
    """Write `chunks()` with `write_chunks` under tracemalloc: (peak bytes allocated meanwhile, file bytes)."""
    path = tmp_path / name
    tracemalloc.start()
    try:
        write_chunks(path, chunks())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, path.stat().st_size


@pytest.fixture(scope='module')
def large() -> tuple[ReportDocument, Gates, Verdict]:
    whole, streamed = documents(CASES, failures=100)
    verdict = verdict_of(whole, Gates())
    return streamed, Gates(), verdict


WRITERS: dict[str, Callable[[ReportDocument, Gates, Verdict], Iterable[str]]] = {
    'json': lambda d, g, v: document_chunks(d),
    'junit': junit_chunks,
    'markdown': markdown_chunks,
    'html': html_chunks,
    'otel-file': lambda d, g, v: otlp_json_line_chunks(d, time_unix_nano=NOW),
}


@pytest.mark.slow
@pytest.mark.parametrize('writer', list(WRITERS))
def test_a_writer_holds_far_less_than_it_writes(
    writer: str, large: tuple[ReportDocument, Gates, Verdict], tmp_path: Path, small_units: None
) -> None:
    document, gates, verdict = large
    cases = cast(Streamed[CaseResult], document.cases)
    cases.passes = 0
    peak, size = _written(tmp_path, writer, lambda: WRITERS[writer](document, gates, verdict))
    print(f'{writer}: {cases.passes} pass(es) over {CASES} cases, peak {peak / 1e6:.2f} MB, file {size / 1e6:.2f} MB')
    assert cases.passes >= 1
    if writer == 'markdown':  # past 50 cases the summary is bounded: its size says nothing of the cases
        assert size < 20_000
        assert peak < 500_000
    else:
        assert size > 2_000_000
        # the HTML page also holds its summary and the part being compressed: a constant, not per case
        assert peak < size / (3 if writer == 'html' else 5)


@pytest.mark.slow
def test_emit_holds_far_less_than_the_events(large: tuple[ReportDocument, Gates, Verdict], small_units: None) -> None:
    document, _, _ = large
    tracemalloc.start()
    try:
        events = evaluation_events(document)
        _, held = tracemalloc.get_traced_memory()
        del events
        tracemalloc.reset_peak()
        baseline, _ = tracemalloc.get_traced_memory()
        exporter = CountingExporter()
        assert emit_otlp(document, exporter=exporter, timeout=60, time_unix_nano=NOW) == []  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f'emit: peak {(peak - baseline) / 1e6:.2f} MB; all events held: {held / 1e6:.2f} MB')
    assert sum(exporter.batches) > 4 * otel_events.WINDOW
    assert peak - baseline < held / 3


def test_the_sample_files_are_current() -> None:
    """The files in `streamed_data/` are what `sample()` gives (regenerate them only from writers known good)."""
    assert math.isfinite(sample().totals.fail_rate)
    assert sorted(p.name for p in DATA.iterdir()) == sorted(
        [f'{name}.{kind}' for name in GATES for kind in ('junit.xml', 'summary.md')] + ['report.json']
    )
    assert dump_document(sample()) == (DATA / 'report.json').read_text(encoding='utf-8')
    assert render_html(sample(), Gates(), verdict_of(sample(), Gates())) == old_render_html(
        sample(), Gates(), verdict_of(sample(), Gates())
    )
