"""The HTML report: one self-contained file that a person opens from disk (`run --html`, `render`).

It shows the summary (cases, verdict, each gate's outcome, averages and pass rates, run metrics),
then every case, failed cases first: each result's value and reason, the case's timeline (agents
as lanes, tool calls as bars by status, model requests with their tokens; every call opens to its
arguments and result) and its expectations aligned against what happened. Filters (failed only,
by evaluator, by agent) and a search narrow the list.

The page is drawn in the browser from a compact JSON payload (`payload`) by `html_assets/report.js`,
inside the shell of `html_page.py` (no network, a Content-Security-Policy, the payload embedded as
data). Every string of data is passed through `visible` here and reaches the page through
`textContent`, never as markup. At 10,000 cases the list is rendered a batch at a time as it is
scrolled to and a case's details only when it is opened (the first `OPEN_AT_LOAD` failed cases are
opened at load, so a trajectory shows without a click). A report of more than `FIRST_ROWS` cases is
split so that its summary shows at once: the page's payload holds the summary and the list rows of
the first `FIRST_ROWS` cases (their names, statuses and one-line briefs), and every case in full
follows the page's script in parts of `PART_CASES` (compressed when large), which the page reads
once the file is parsed; until then the filters and the search wait, disabled, and the list says how
many cases are still loading.

`render_html(document, gates, verdict) -> str` is the view (what the CLI and the benchmarks call);
`html_chunks` gives the same text a piece at a time, for a report too large to hold: it makes each
case's entry as the cases are read, sorts the entries (failed first) on disk in runs of
`PART_CASES` merged back, and writes each part as it is merged, so memory holds a few parts, not the
report. The summary (and its first rows) needs every case, so nothing is written until one pass
over the cases is done.
Once the summary and the first rows of the case list are in the DOM, the page sets `data-ready` on
`<body>`: `READY_SELECTOR` (`body[data-ready]`) is what a test or a benchmark waits for; once every
case is in (the filters work on all of them), `data-loaded` follows (`LOADED_SELECTOR`). The first failed
cases are opened in the task after the first frame, so they never hold it back; `data-opened`
(`OPENED_SELECTOR`) follows.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import json
import math
import pickle
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..reports.document import (
    Alignment,
    CaseFailure,
    CaseResult,
    ReportDocument,
    RequestSpan,
    Timeline,
    document_from_report,
)
from ..reports.gates import DURATION, Gates, format_metric, format_number
from ..reports.judge import case_verdict, check_gates
from ..reports.verdict import AverageVerdict, CaseVerdict, Verdict
from .html_page import asset, page_chunks, read_parts, read_payload
from .text import visible
from .wording import average_figure, check_figure, gate_phrase, label_shares

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from pydantic_evals.reporting import EvaluationReport

    from ..capturing import Capture
    from ..trajectory.account import TraceAccount

READY_SELECTOR = 'body[data-ready]'
"""Matches once the summary and the first rows of the case list are shown."""
LOADED_SELECTOR = 'body[data-loaded]'
"""Matches once every case is in the page (and the filters and the search are enabled)."""
OPENED_SELECTOR = 'body[data-opened]'
"""Matches once the first `OPEN_AT_LOAD` failed cases are open: in the task after the first frame that
showed the summary and the first rows."""
PAYLOAD_VERSION = 2
FIRST_ROWS = 100
"""Cases whose list rows are in the page's first payload (report.js draws its list a batch of this many at a time)."""
OPEN_AT_LOAD = 3
"""The first failed cases shown open when the page loads (a split page carries them whole among its first
rows), so a trajectory is on the page without a click; report.js reads it from the payload (`open`)."""
PART_CASES = 500
"""Cases per part of a split page: each part is compressed while the next is made, and parsed by the
page in a task of its own."""
VALUE_LIMIT = 4000
"""Characters shown of a case's inputs, output, expected output and metadata (as JSON text)."""
NO_TIMELINE = 'No timeline: the report holds no spans for this case.'
NO_SPANS = 'No timeline: no spans were given (pass spans= with what capture() recorded around the evaluation).'
NO_CASE_SPANS = (
    'No timeline: none of the spans given belongs to this case (pydantic-evals links a case to its spans'
    ' only when Logfire is configured: logfire.configure(send_to_logfire=False)).'
)
STATUS_CODES = {'ok': 0, 'failed': 1, 'deferred': 2}
"""A call's status in the payload (report.js reads the same codes)."""
RUN_METRICS = ('requests', 'input_tokens', 'output_tokens', 'total_tokens', 'cost')


MERGE_RUNS = 64
"""Sorted runs merged at once (files open at once); more runs are merged into longer ones first."""


def render_html(document: ReportDocument, gates: Gates, verdict: Verdict, *, no_timeline: str = NO_TIMELINE) -> str:
    """The report as one HTML document (text). `no_timeline` is what a case without a timeline says."""
    return ''.join(html_chunks(document, gates, verdict, no_timeline=no_timeline))


def html_chunks(
    document: ReportDocument, gates: Gates, verdict: Verdict, *, no_timeline: str = NO_TIMELINE
) -> Iterator[str]:
    """`render_html`'s text a piece at a time, holding a few parts' cases at most (see the module's docstring)."""
    title = f'{visible(document.name, newlines=False)} — agentic-evals report'
    page: dict[str, Any] = {'css': [asset('report.css')], 'js': [asset('report.js')], 'body': _SKELETON}
    count = len(document.cases) + len(document.failures)
    if count <= FIRST_ROWS:  # one payload of at most FIRST_ROWS cases
        with _collector_paused():
            text = payload_text(payload(document, gates, verdict, no_timeline=no_timeline))
        yield from page_chunks(title, text, **page)
        return
    survey = _Survey()
    with tempfile.TemporaryDirectory(prefix='agentic-evals-html-') as directory:
        with _collector_paused():
            entries = (
                (entry['s'] != 'fail', entry['n'], index, {k: entry[k] for k in 'nsb'}, payload_text(entry))
                for index, entry in enumerate(survey.entries(document, gates))
            )
            ordered = _sorted(entries, Path(directory))
            data = _summary(document, gates, verdict, survey, no_timeline)
        first = list(itertools.islice(ordered, FIRST_ROWS))
        data['count'] = count
        data['rows'] = [row for *_, row, _ in first]
        for place, (passed, *_, text) in enumerate(first[:OPEN_AT_LOAD]):
            if not passed:  # a failed case opened at load: whole, so it shows before the parts are read
                data['rows'][place] = json.loads(text)
        texts = (text for *_, text in itertools.chain(first, ordered))
        del first  # held by the chain only until its entries are written
        yield from page_chunks(title, payload_text(data), parts=_parts(texts), **page)


def _parts(texts: Iterable[str]) -> Iterator[str]:
    """The payload text of each part: a JSON list of `PART_CASES` entries, as `payload_text` writes a list."""
    for batch in _batched(texts, PART_CASES):
        batch[0] = '[' + batch[0]
        batch[-1] += ']'  # (the same item when there is one)
        held = [','.join(batch)]
        del batch
        yield held.pop()  # held no longer here while the page makes its element: one copy fewer


_Entry = tuple[bool, str, int, dict[str, Any], str]
"""A case's entry as it is sorted: (passed, name, position: the sort key), its list row, its payload text."""


def _sorted(entries: Iterable[_Entry], directory: Path) -> Iterator[_Entry]:
    """`entries` in order, holding at most `PART_CASES` of them: every full run is sorted and written to
    `directory`, then the runs are merged back. All of `entries` is read before this returns."""
    runs: list[Path] = []
    names = itertools.count()
    last: list[_Entry] = []
    for run in _batched(entries, PART_CASES):
        if len(run) < PART_CASES:  # the last run, held (a report of fewer cases touches no file)
            last = sorted(run)
        else:
            runs.append(_write_run(sorted(run), directory / f'{next(names)}.run'))
    while len(runs) >= MERGE_RUNS:
        merged = heapq.merge(*(_read_run(path) for path in runs[:MERGE_RUNS]))
        runs = [*runs[MERGE_RUNS:], _write_run(merged, directory / f'{next(names)}.run')]
    return heapq.merge(*(_read_run(path) for path in runs), last)


def _write_run(entries: Iterable[_Entry], path: Path) -> Path:
    with path.open('wb') as file:
        for entry in entries:
            pickle.dump(entry, file, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _read_run(path: Path) -> Iterator[_Entry]:
    """The entries of a run written by `_write_run` (this render's own file); the file goes once read."""
    with path.open('rb') as file:
        while True:
            try:
                entry: _Entry = pickle.load(file)
            except EOFError:
                break
            yield entry
    path.unlink()


def _batched(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def read_report_payload(page: str) -> Any:
    """The payload of a page made by `render_html`, parsed and whole (as `payload` gives it, every string
    made visible), whether the page was split or not: for tests and tools."""
    data: Any = read_payload(page)
    if 'rows' in data:
        del data['rows'], data['count']
        parts: list[Any] = read_parts(page)
        data['cases'] = [case for part in parts for case in part]
    return data


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the payload is built: the payload holds no cycles, but
    its million small lists would set off collections that walk every object of the report again and
    again (they took about a quarter of the render at 10,000 cases)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def html_report(
    report: EvaluationReport[Any, Any, Any],
    *,
    spans: Capture | Iterable[ReadableSpan] | None = None,
    gates: Gates | None = None,
) -> str:
    """The HTML report of a pydantic-evals `EvaluationReport` (from `Dataset.evaluate`), as text.

    `spans`: what `capture()` recorded around the evaluation (the `Capture`, or its `.spans`), so
    each case shows its timeline and alignments; without them every result is still shown, and each
    case says that no spans were given. `gates`: the gates whose verdict the report shows (default:
    every assertion must pass, as `run` with no gate flags).
    """
    from ..reports.case_trace import case_details, case_trees

    if spans is None:
        document = document_from_report(report)
        note = NO_SPANS
    else:
        found = spans.spans if hasattr(spans, 'spans') else list(spans)
        tree_of = case_trees(found)

        def details(case: Any) -> Any:
            tree = tree_of(case)
            return case_details(tree, case) if tree is not None else None

        document = document_from_report(report, details)
        note = NO_CASE_SPANS
    gates = gates if gates is not None else Gates()
    return render_html(document, gates, check_gates(document, gates), no_timeline=note)


def write_html_report(
    report: EvaluationReport[Any, Any, Any],
    path: str | Path,
    *,
    spans: Capture | Iterable[ReadableSpan] | None = None,
    gates: Gates | None = None,
) -> Path:
    """Write `html_report(report, spans=..., gates=...)` to `path` (UTF-8) and return the path."""
    target = Path(path)
    target.write_text(html_report(report, spans=spans, gates=gates), encoding='utf-8')
    return target


def payload_text(data: Any) -> str:
    """`data` as compact JSON text in which every string (keys too) is `visible(...)` of the original.

    Two passes over the whole text instead of a call per string (a 10,000-case report holds about a
    million): two patterns find every character `visible` could escape, as JSON spells it (a `\\u00XX`,
    `\\b`, `\\f` or `\\r` escape, or the character itself), and `visible` decides what it shows as;
    an escaped backslash is matched as a whole, so `\\\\u0001` (a backslash, then `u0001`) stays text.
    """
    # No check for reference cycles (a tenth of the time): the payload is made of fresh lists and dicts,
    # and a document's values reach it as JSON text (`_json_text`).
    options: dict[str, Any] = {'ensure_ascii': False, 'separators': (',', ':'), 'check_circular': False}
    try:
        text = json.dumps(data, allow_nan=False, **options)
    except ValueError:  # NaN or infinity from a hand-made document: null, as the JSON report writes them
        text = json.dumps(_finite(data), **options)
    text = _JSON_ESCAPE.sub(_visible_token, text)
    if not text.isascii() or '\x7f' in text:
        text = _JSON_RAW.sub(_visible_token, text)
    return text


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


_JSON_ESCAPE = re.compile(r'\\(?:u00[01][0-9a-f]|[bfr\\])')
"""How JSON spells the controls `visible` escapes (and an escaped backslash, matched to be skipped)."""
_JSON_RAW = re.compile('[\x7f-\x9f\u2000-\u206f\ud800-\udfff\ufff0-\uffff]')
"""A superset of the characters JSON leaves as they are and `visible` escapes (tests check every code point)."""
_JSON_SHORT = {'b': '\b', 'f': '\f', 'r': '\r'}


def _visible_token(match: re.Match[str]) -> str:
    token = match[0]
    if token == '\\\\':
        return token
    char = (_JSON_SHORT.get(token[1]) or chr(int(token[2:], 16))) if token[0] == '\\' else token
    shown = visible(char)
    return token if shown == char else shown.replace('\\', '\\\\')


# -- the payload -------------------------------------------------------------------------------------
#
# Compact for 10,000 cases: short keys, lists for calls and requests, empty fields left out. report.js
# is its one reader; the layout is documented there, beside the code that reads it.


def payload(document: ReportDocument, gates: Gates, verdict: Verdict, *, no_timeline: str = NO_TIMELINE) -> Any:
    """What report.js draws, as JSON-ready values; `payload_text` makes it the page's JSON, every string
    passed through `visible`. (The whole of it: `html_chunks` makes it in pieces.)"""
    survey = _Survey()
    cases = list(survey.entries(document, gates))
    cases.sort(key=lambda c: (c['s'] != 'fail', c['n']))
    return {**_summary(document, gates, verdict, survey, no_timeline), 'cases': cases}


class _Survey:
    """What the summary says of all the entries, gathered while they are made (so in the same pass)."""

    def __init__(self) -> None:
        self.failed = 0
        self.evaluators: set[str] = set()
        self.agents: set[str] = set()

    def entries(self, document: ReportDocument, gates: Gates) -> Iterator[dict[str, Any]]:
        """Each case's entry, then each case failure's, in the document's order."""
        for case in document.cases:
            self.evaluators.update(r.evaluator or name for name, r in _results(case))
            self.evaluators.update(e.evaluator or e.name for e in case.evaluator_errors)
            if case.timeline:
                self.agents.update(a.name for a in case.timeline.agents)
            entry = _case(case, case_verdict(case, gates))
            self.failed += entry['s'] == 'fail'
            yield entry
        for failure in document.failures:
            self.failed += 1
            yield _failure(failure)


def _summary(
    document: ReportDocument, gates: Gates, verdict: Verdict, survey: _Survey, no_timeline: str
) -> dict[str, Any]:
    """The payload but its cases, once `survey` has seen them all."""
    totals = document.totals
    return {
        'v': PAYLOAD_VERSION,
        'name': document.name,
        'verdict': {
            'passed': verdict.passed,
            'summary': verdict.summary,
            'gates': [[r.gate, r.passed, r.detail] for r in verdict.results],
        },
        'totals': {
            'cases': totals.cases,
            'failed': survey.failed,
            'failed_results': totals.failed_cases,
            'case_failures': totals.case_failures,
            'assertions': totals.assertions,
            'failed_assertions': totals.failed_assertions,
            'evaluator_errors': totals.evaluator_errors,
        },
        'averages': _averages(document, verdict),
        'metrics': _run_metrics(verdict),
        'evaluators': sorted(survey.evaluators),
        'agents': sorted(survey.agents),
        'no_timeline': no_timeline,
        'open': OPEN_AT_LOAD,
    }


def _results(case: CaseResult) -> list[tuple[str, Any]]:
    return [*case.scores.items(), *case.assertions.items(), *case.labels.items()]


STATUS = {False: 'fail', True: 'pass', None: 'scored'}
"""A case's status in the payload: `scored` when no gate judged anything in it (its scores are scores)."""
MARKS = {'fail': 1, 'allowed': 1, 'below': 2}
"""A result row's mark in the payload: 1 failed, 2 below its average's gate, else 0."""


def _case(case: CaseResult, verdict: CaseVerdict) -> dict[str, Any]:
    rows: list[list[Any]] = []
    by_name = {(c.kind, c.name): c for c in verdict.checks}
    for name, score in case.scores.items():
        mark = MARKS.get(by_name[('score', name)].status, 0)
        rows.append(['s', name, score.value, score.reason, score.evaluator, mark])
    for name, assertion in case.assertions.items():
        mark = 0 if assertion.value else 1
        rows.append(['a', name, assertion.value, assertion.reason, assertion.evaluator, mark])
    for name, label in case.labels.items():
        rows.append(['l', name, label.value, label.reason, label.evaluator, 0])
    for error in case.evaluator_errors:
        rows.append(['e', error.name, None, error.message, error.evaluator, 1])
    for check in verdict.checks:
        if check.kind == 'missing':
            bound = '' if check.bound is None else format_number(check.bound)
            rows.append(['g', check.name, 'missing', f'no result; min-case-score {bound}', None, 1])
        elif check.kind == 'metric' and check.status == 'fail' and check.bound is not None:
            limit = format_metric(check.name, check.bound)
            rows.append(['g', check.name, check_figure(check), f'max-case-metric {limit}', None, 1])
    calls = len(case.timeline.calls) if case.timeline is not None else None
    brief = [None, list(dict.fromkeys(r[1] for r in rows if r[5] == 1)), calls, case.duration]
    entry: dict[str, Any] = {'n': case.name, 's': STATUS[verdict.passed], 'b': brief, 'R': rows}
    metrics: dict[str, Any] = dict(case.metrics)
    metrics[DURATION] = case.duration
    entry['m'] = metrics
    _values(entry, case.inputs, case.output, case.expected_output, case.metadata)
    if case.trace_id:
        entry['tr'] = case.trace_id
    if case.span_id:
        entry['sp'] = case.span_id
    if case.timeline is not None:
        entry['T'] = _timeline(case.timeline, case.account)
    if case.alignments:
        entry['X'] = [_alignment(a) for a in case.alignments]
    return entry


def _failure(failure: CaseFailure) -> dict[str, Any]:
    brief = [failure.error.split('\n', 1)[0]]
    entry: dict[str, Any] = {'n': failure.name, 's': 'fail', 'b': brief, 'F': failure.error, 'R': []}
    _values(entry, failure.inputs, None, failure.expected_output, failure.metadata)
    return entry


def _values(entry: dict[str, Any], inputs: Any, output: Any, expected: Any, metadata: Any) -> None:
    for key, value in (('in', inputs), ('out', output), ('exp', expected), ('meta', metadata)):
        if value is not None:
            entry[key] = _json_text(value)


_VALUE_JSON = json.JSONEncoder(ensure_ascii=False, separators=(',', ':'), default=repr)
"""One encoder for every value (`json.dumps` with options makes a new one per call)."""


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = _VALUE_JSON.encode(value)  # indented by the page
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    if len(text) > VALUE_LIMIT:
        text = f'{text[:VALUE_LIMIT]}… ({len(text) - VALUE_LIMIT:,} more characters)'
    return text


def _timeline(timeline: Timeline, account: TraceAccount | None = None) -> dict[str, Any]:
    """Lanes (`L`: agent paths, outermost first), agent runs (`A`), calls (`C`), requests (`Q`); times in
    whole microseconds (shorter in the payload and quicker to write than seconds: report.js divides).
    A request's tokens are null where the trace recorded none (`tokens_recorded`, from `account`)."""
    try:
        return _timeline_entry(timeline, _microseconds, account)
    except (ValueError, OverflowError):  # NaN or infinity from a hand-made document: null
        return _timeline_entry(timeline, _finite_microseconds, account)


def tokens_recorded(request: RequestSpan, account: TraceAccount | None) -> bool:
    """Whether the request's token counts are figures its trace recorded, not the zeros a request without
    usage gets: a count above zero was recorded; zeros are real only when the case's trace account says
    every model request recorded its usage (`TraceAccount.with_tokens`). A trace that records tokens for
    some requests only (Mastra's bridge: per agent run), or none, leaves the others at zero, and without
    an account (a hand-made document) zeros say nothing either. The HTML views show no token figure
    where this is false."""
    if request.input_tokens or request.output_tokens:
        return True
    return account is not None and account.model_spans > 0 and account.with_tokens >= account.model_spans


def _microseconds(seconds: float) -> int:
    return round(seconds * 1e6)


def _finite_microseconds(seconds: float) -> int | None:
    return round(seconds * 1e6) if math.isfinite(seconds) else None


def _timeline_entry(
    timeline: Timeline, us: Callable[[float], int | None], account: TraceAccount | None
) -> dict[str, Any]:
    lanes: dict[tuple[str, ...], int] = {}

    def lane(path: Iterable[str]) -> int:
        return lanes.setdefault(tuple(path), len(lanes))

    agents = [[lane(a.path), us(a.start), us(a.end)] for a in timeline.agents]
    calls = [
        [
            lane(c.agent_path),
            c.name,
            STATUS_CODES.get(c.status, 0),
            us(c.start),
            us(c.end),
            c.arguments,
            c.result,
            c.failure_stage,
            int(c.output_function),
        ]
        for c in timeline.calls
    ]
    requests = [
        [lane(r.agent_path), r.model, us(r.start), us(r.end), r.input_tokens, r.output_tokens, r.cost]
        if tokens_recorded(r, account)
        else [lane(r.agent_path), r.model, us(r.start), us(r.end), None, None, r.cost]
        for r in timeline.requests
    ]
    entry: dict[str, Any] = {'L': [list(path) for path in lanes], 'A': agents, 'C': calls, 'Q': requests}
    if timeline.omitted:
        entry['o'] = timeline.omitted
    return entry


def _alignment(alignment: Alignment) -> list[Any]:
    """A row is [status, expected, actual, keys, differences], or just [status, expected] for the common
    row whose actual call reads as the expected one with nothing marked (the payload's largest saving)."""
    rows = [
        [row.status, row.expected]
        if row.actual == row.expected and not row.keys and not row.differences
        else [row.status, row.expected, row.actual, row.keys, row.differences]
        for row in alignment.rows
    ]
    return [alignment.result, alignment.evaluator, alignment.turn, rows]


def _averages(document: ReportDocument, verdict: Verdict) -> list[list[Any]]:
    """Rows of [name, kind, shown value, gate text, gate status]: status 1 passes, 0 fails, None no gate
    (or failures allowed), as the verdict judged them; then the labels' shares."""
    rows: list[list[Any]] = []
    for row in verdict.averages:
        if row.kind != 'metric':
            status = {'pass': 1, 'fail': 0}.get(row.status or '')
            rows.append([row.name, row.kind, average_figure(row), _gate_text(row), status])
    for name, shares in document.averages.labels.items():
        shown = label_shares(shares)
        rows.append([name, 'label', shown, '', None])
    return rows


def _gate_text(row: AverageVerdict) -> str:
    return '; '.join(('average ' if g.gate == 'min-score' else '') + gate_phrase(row, g) for g in row.gates)


def _run_metrics(verdict: Verdict) -> list[list[Any]]:
    """Rows of [name, shown mean, recorded by how many cases] for the run metrics: standard ones first,
    `duration` last."""
    metrics = {row.name: row for row in verdict.averages if row.kind == 'metric'}
    names = [n for n in RUN_METRICS if n in metrics] + sorted(set(metrics) - {*RUN_METRICS, DURATION})
    names += [DURATION] if DURATION in metrics else []
    return [[name, average_figure(metrics[name]), metrics[name].cases] for name in names]


_SKELETON = """<noscript><p class="page-error">This report is drawn by JavaScript:
allow scripts for this file to see it.</p></noscript>
<header id="top"></header>
<main>
<section id="summary" aria-label="Summary"></section>
<section id="cases" aria-label="Cases"></section>
</main>"""
"""Static markup only (no data): report.js fills these elements."""
