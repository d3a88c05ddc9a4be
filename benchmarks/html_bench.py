"""The HTML report at 1,000 and 10,000 cases: its size, the Python render, and how soon chromium shows it.

Usage (from the repository root): `python -m benchmarks.html_bench [--sizes 1000 10000] [--loads 3]`,
or `make bench-html`.

Each document is built with the report document's own types (`reports/document.py`): every case has
seven evaluator results with reasons, metrics, a timeline of about twenty tool calls and model
requests (agents, arguments, results, tokens), an alignment of expected against actual calls, and
about one case in eight fails (a failed assertion, a failed tool call, now and then an evaluator
error); a few cases are case failures. The same seed gives the same documents.

Figures, per size:

- the file's size, and the Python render: the median of `--renders` calls of the renderer;
- in Debian's chromium (headless, through Playwright, never a downloaded browser), the median of
  `--loads` loads, each in a fresh browser context (no cache), network blocked: first paint and
  first contentful paint (`performance.getEntriesByType('paint')`), `DOMContentLoaded` and `load`
  (navigation timing), and "ready": when the page has marked itself ready (`READY_SELECTOR`) and
  the summary and the first case row both have a layout box (a script run at document start
  watches the page for them), taken in a task after the next animation frame, once the main thread
  has painted them; "opened": when the first failed cases are open (`OPENED_SELECTOR`, set in
  the task after the first frame) and their timelines laid out (`.timeline[data-laid-out]`), taken
  the same way after the next frame; and "loaded": when every case is in the page and the filters work
  (`LOADED_SELECTOR`; a large report reads its cases after its first rows are shown). First paint
  and FCP are presentation times (when the compositor showed a frame), so ready can come a few
  milliseconds before the FCP of the same frame. Every time is milliseconds since navigation start.

A page error or console error in any load stops the run with exit status 1: the figures of a broken
page mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_evals.reports.document import (
    AgentSpan,
    AlignedCall,
    Alignment,
    AssertionResult,
    CallSpan,
    CaseFailure,
    CaseResult,
    EvaluatorError,
    ReportDocument,
    RequestSpan,
    ScoreResult,
    Timeline,
)
from agentic_evals.reports.gates import Gates
from agentic_evals.reports.judge import check_gates
from agentic_evals.views.html import LOADED_SELECTOR, OPENED_SELECTOR, READY_SELECTOR, render_html

from .run import host

SEED = 20251201
SIZES = (1_000, 10_000)
LOADS = 3
RENDERS = 3
VIEWPORT = {'width': 1280, 'height': 800}
LOAD_TIMEOUT_MS = 120_000

TOOLS = (
    'search_flights',
    'get_weather',
    'book_hotel',
    'lookup_customer',
    'send_email',
    'query_orders',
    'read_file',
    'calculator',
    'create_ticket',
    'search_docs',
)
MODELS = ('gpt-4o-2024-08-06', 'claude-sonnet-4-5', 'gemini-2.5-flash')
CITIES = ('Paris', 'Lisbon', 'Osaka', 'Nairobi', 'Quito', 'Oslo', 'Hanoi', 'Austin')
SENTENCE = (
    'the customer asked about a refund for order which arrived late and damaged so the agent looked up '
    'their account history checked the shipping status and offered a replacement or credit according '
    'to the policy for premium members in the current quarter'
)
WORDS = tuple(SENTENCE.split())


# -- the documents ---------------------------------------------------------------------------------


def _text(rng: random.Random, low: int, high: int) -> str:
    return ' '.join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def _arguments(rng: random.Random, tool: str) -> str:
    return json.dumps(
        {
            'query': _text(rng, 3, 8),
            'city': rng.choice(CITIES),
            'limit': rng.randint(1, 20),
            'options': {'currency': 'EUR', 'include_details': rng.random() < 0.5, 'tool': tool},
        }
    )


def _result(rng: random.Random) -> str:
    rows = [{'id': rng.randint(1000, 99999), 'summary': _text(rng, 5, 15)} for _ in range(rng.randint(1, 4))]
    return json.dumps({'status': 'ok', 'rows': rows})


def _timeline(rng: random.Random, failing: bool) -> Timeline:
    agents = [AgentSpan('support_agent', ['support_agent'], 0.0, 0.0, span_id=f'{rng.getrandbits(64):016x}')]
    sub_agent = rng.random() < 0.4
    if sub_agent:
        agents.append(AgentSpan('research_agent', ['support_agent', 'research_agent'], 0.0, 0.0))
    calls: list[CallSpan] = []
    requests: list[RequestSpan] = []
    now = 0.0
    n_requests = rng.randint(6, 9)
    n_calls = rng.randint(10, 14)
    failed_at = rng.randrange(n_calls) if failing and rng.random() < 0.7 else -1
    per_request = [n_calls // n_requests + (i < n_calls % n_requests) for i in range(n_requests)]
    for index, count in enumerate(per_request):
        path = agents[1].path if sub_agent and index % 3 == 1 else agents[0].path
        duration = rng.uniform(0.3, 2.5)
        requests.append(
            RequestSpan(
                rng.choice(MODELS),
                list(path),
                now,
                now + duration,
                input_tokens=rng.randint(400, 6000),
                output_tokens=rng.randint(20, 600),
                cost=round(rng.uniform(0.0005, 0.03), 6),
            )
        )
        now += duration
        for _ in range(count):
            tool = rng.choice(TOOLS)
            duration = rng.uniform(0.01, 1.2)
            failed = len(calls) == failed_at
            calls.append(
                CallSpan(
                    tool,
                    'failed' if failed else 'ok',
                    list(path),
                    now,
                    now + duration,
                    arguments=_arguments(rng, tool),
                    result=f'ToolRetryError: {tool} timed out after 30 s' if failed else _result(rng),
                    failure_stage='execution' if failed else None,
                )
            )
            now += duration * rng.uniform(0.2, 1.0)
    agents[0].end = now
    if sub_agent:
        agents[1].start, agents[1].end = requests[1].start, requests[-1].end
    return Timeline(agents=agents, calls=calls, requests=requests)


def _alignment(rng: random.Random, timeline: Timeline, failing: bool) -> Alignment:
    rows = []
    for call in timeline.calls[: rng.randint(4, 8)]:
        text = f'{call.name}({call.arguments})'
        if failing and rng.random() < 0.3:
            rows.append(
                AlignedCall('mismatch', text, text.replace('EUR', 'USD'), ['options.currency'], ["'EUR' != 'USD'"])
            )
        else:
            rows.append(AlignedCall('matched', text, text))
    if failing:
        rows.append(AlignedCall('missing', expected=f'{rng.choice(TOOLS)}({{"city": "Oslo"}})'))
        rows.append(AlignedCall('extra', actual=f'{rng.choice(TOOLS)}({{"limit": 3}})'))
    return Alignment('tool_call_match', 'ToolCallMatch', rows)


def make_case(rng: random.Random, index: int) -> CaseResult:
    failing = rng.random() < 0.125
    timeline = _timeline(rng, failing)
    calls = len(timeline.calls)
    used = sorted({c.name for c in timeline.calls})

    def score(low: float) -> float:
        return round(rng.uniform(low, 0.7) if failing else rng.uniform(0.8, 1.0), 4)

    scores = {
        'tool_correctness': ScoreResult(
            score(0.2), f'used {", ".join(used[:4])}; expected all of them', 'ToolCorrectness'
        ),
        'argument_correctness': ScoreResult(
            score(0.3), f'{calls - failing} of {calls} calls had the expected arguments', 'ArgumentCorrectness'
        ),
        'trajectory_match': ScoreResult(score(0.1), 'in_order: LCS 9 of 11 expected calls', 'TrajectoryMatch'),
        'tool_call_f1': ScoreResult(score(0.2), f'precision 0.9, recall 0.8 over {calls} calls', 'ToolCallF1'),
    }
    tool_call_match = not failing or rng.random() < 0.4
    assertions = {
        'tool_call_match': AssertionResult(
            tool_call_match,
            'every expected call was made' if tool_call_match else 'missing search_docs(city="Oslo"); extra calculator',
            'ToolCallMatch',
        ),
        'max_tool_calls': AssertionResult(calls <= 14, f'{calls} tool calls (at most 14)', 'MaxToolCalls'),
        'no_loops': AssertionResult(not failing or rng.random() < 0.6, 'no call repeated 3 times in a row', 'NoLoops'),
    }
    errors = []
    if failing and rng.random() < 0.1:
        errors.append(
            EvaluatorError('trajectory_judge', 'UnexpectedModelBehavior: judge output invalid', 'TrajectoryJudge')
        )
    input_tokens = sum(r.input_tokens for r in timeline.requests)
    output_tokens = sum(r.output_tokens for r in timeline.requests)
    return CaseResult(
        name=f'case-{index:05d}-{rng.choice(CITIES).lower()}',
        inputs={'question': _text(rng, 8, 25), 'customer_id': rng.randint(1, 10**6)},
        metadata={'suite': 'support', 'difficulty': rng.choice(('easy', 'medium', 'hard'))},
        expected_output={'resolution': rng.choice(('refund', 'replacement', 'credit'))},
        output=_text(rng, 15, 60),
        scores=scores,
        assertions=assertions,
        metrics={
            'requests': len(timeline.requests),
            'input_tokens': input_tokens,
            'output_tokens': output_tokens,
            'cost': round(sum(r.cost or 0.0 for r in timeline.requests), 6),
        },
        evaluator_errors=errors,
        duration=round(timeline.agents[0].end, 3),
        trace_id=f'{rng.getrandbits(128):032x}',
        span_id=timeline.agents[0].span_id,
        timeline=timeline,
        alignments=[_alignment(rng, timeline, failing)],
    )


def make_document(cases: int, seed: int = SEED) -> ReportDocument:
    """`cases` cases, about one in two hundred of them a case failure (no trace found)."""
    rng = random.Random(seed + cases)
    results: list[CaseResult] = []
    failures: list[CaseFailure] = []
    for index in range(cases):
        if rng.random() < 0.005:
            failures.append(CaseFailure(f'case-{index:05d}-missing', f'no trace found for case-{index:05d}'))
        else:
            results.append(make_case(rng, index))
    return ReportDocument(name=f'support agent, {cases:,} cases', cases=results, failures=failures).with_derived()


# -- the renderer ----------------------------------------------------------------------------------


def renderer(document: ReportDocument) -> Callable[[], str]:
    """One render of `document` by the HTML report, under the default gates (as `run` has them); the
    verdict is worked out here, outside the timed call."""
    gates = Gates()
    verdict = check_gates(document, gates)
    return lambda: render_html(document, gates, verdict)


READY = (READY_SELECTOR, '#summary > *', '#case-list li.case')
"""The page's own "summary and first rows shown" mark, and both of them laid out."""


# -- the browser -----------------------------------------------------------------------------------

WATCH = """
(() => {
  const marks = window.__bench = {};
  const selectors = %s;
  const loaded = %s;
  const opened = %s;
  const shown = sel => {
    const e = document.querySelector(sel), box = e && e.getBoundingClientRect();
    return !!box && box.width > 0 && box.height > 0;
  };
  const check = () => {
    if (!marks.loaded && document.querySelector(loaded)) marks.loaded = performance.now();
    const laidOut = () => document.querySelector('#case-list .timeline[data-laid-out]');
    if (!marks.open && document.querySelector(opened) && laidOut()) {
      marks.open = performance.now();
      requestAnimationFrame(() => setTimeout(() => { marks.opened = performance.now(); }, 0));
    }
    if (!marks.dom && selectors.every(shown)) {
      marks.dom = performance.now();
      requestAnimationFrame(() => setTimeout(() => { marks.ready = performance.now(); }, 0));
    }
    if (marks.dom && marks.loaded && marks.open) observer.disconnect();
  };
  const observer = new MutationObserver(check);
  observer.observe(document, {childList: true, subtree: true, attributes: true});
  document.addEventListener('DOMContentLoaded', check);
})();
"""

READ = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = Object.fromEntries(performance.getEntriesByType('paint').map(e => [e.name, e.startTime]));
  return {
    fp: paint['first-paint'] ?? null, fcp: paint['first-contentful-paint'] ?? null,
    dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, ready: window.__bench.ready,
    loaded: window.__bench.loaded ?? null, opened: window.__bench.opened ?? null,
    heap: performance.memory ? performance.memory.usedJSHeapSize : null,
  };
}"""


def chromium() -> str:
    found = os.environ.get('AGENTIC_EVALS_CHROMIUM') or shutil.which('chromium') or shutil.which('chromium-browser')
    if not found:
        raise SystemExit('no chromium: run `make browser` (Debian chromium) or set AGENTIC_EVALS_CHROMIUM')
    return found


@dataclass
class Load:
    fp: float | None
    fcp: float | None
    dcl: float
    load: float
    ready: float
    loaded: float | None
    opened: float | None
    heap: int | None


def load_page(browser: Any, path: Path, ready: Sequence[str]) -> Load:
    """One load of `path` in a fresh context; raises on a page or console error or a network request."""
    context = browser.new_context(viewport=VIEWPORT)
    problems: list[str] = []

    def route(route: Any) -> None:
        if route.request.url.startswith(('file:', 'data:', 'about:', 'blob:')):
            route.continue_()
        else:
            problems.append(f'network request: {route.request.url}')
            route.abort()

    def console(message: Any) -> None:
        if message.type in ('error', 'assert'):
            problems.append(f'console {message.type}: {message.text}')

    try:
        context.route('**/*', route)
        context.add_init_script(
            WATCH % (json.dumps(list(ready)), json.dumps(LOADED_SELECTOR), json.dumps(OPENED_SELECTOR))
        )
        page = context.new_page()
        page.on('pageerror', lambda error: problems.append(f'page error: {error}'))
        page.on('console', console)
        try:
            page.goto(path.as_uri(), wait_until='load', timeout=LOAD_TIMEOUT_MS)
            page.wait_for_function('() => window.__bench && window.__bench.ready', timeout=LOAD_TIMEOUT_MS, polling=50)
            page.wait_for_function('() => window.__bench.loaded', timeout=LOAD_TIMEOUT_MS, polling=50)
            # (every generated document has failed cases, so some open)
            page.wait_for_function('() => window.__bench.opened', timeout=LOAD_TIMEOUT_MS, polling=50)
        except Exception as error:
            problems.append(f'not shown: {str(error).splitlines()[0]}')
        page.wait_for_timeout(100)  # paint entries are queued after the frame
        figures = page.evaluate(READ)
    finally:
        context.close()
    if problems:
        raise SystemExit(f'{path.name}: ' + '; '.join(problems[:5]))
    return Load(**figures)


def median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def ms(value: float | None) -> str:
    return '-' if value is None else f'{value:,.0f}'


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--sizes', type=int, nargs='+', default=list(SIZES))
    parser.add_argument('--loads', type=int, default=LOADS)
    parser.add_argument('--renders', type=int, default=RENDERS)
    parser.add_argument('--ready', nargs='+', metavar='SELECTOR', help='what must be shown (default: READY)')
    parser.add_argument('--keep', type=Path, help='write the reports into this directory and keep them')
    args = parser.parse_args(argv)

    os.environ.setdefault('PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD', '1')
    from playwright.sync_api import sync_playwright

    ready = tuple(args.ready or READY)
    executable = chromium()
    out = args.keep or Path(tempfile.mkdtemp(prefix='html-bench-'))
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=['--no-sandbox', '--host-resolver-rules=MAP * ~NOTFOUND']
        )
        print(*host(), f'Chromium {browser.version} ({executable}), Playwright {_version("playwright")}', sep='\n')
        print(f'ready: {", ".join(ready)} laid out', flush=True)
        for size in args.sizes:
            document = make_document(size)
            render = renderer(document)
            timings = []
            for _ in range(args.renders):
                start = time.perf_counter()
                text = render()
                timings.append(time.perf_counter() - start)
            path = out / f'report-{size}.html'
            data = text.encode('utf-8')
            path.write_bytes(data)
            loads = [load_page(browser, path, ready) for _ in range(args.loads)]
            rows.append((size, len(data), statistics.median(timings), loads))
            print(f'  {size:,} cases: {len(data) / 1e6:.1f} MB, measured', flush=True)
        browser.close()
    print()
    header = (
        'cases',
        'bytes',
        'MB',
        'render s',
        'FP ms',
        'FCP ms',
        'DCL ms',
        'load ms',
        'ready ms',
        'opened ms',
        'loaded ms',
        'JS heap MB',
    )
    table = [
        (
            f'{size:,}',
            f'{size_bytes:,}',
            f'{size_bytes / 1e6:.2f}',
            f'{render_s:.2f}',
            ms(median([x.fp for x in loads])),
            ms(median([x.fcp for x in loads])),
            ms(median([x.dcl for x in loads])),
            ms(median([x.load for x in loads])),
            ms(median([x.ready for x in loads])),
            ms(median([x.opened for x in loads])),
            ms(median([x.loaded for x in loads])),
            '-' if (heap := median([x.heap for x in loads])) is None else f'{heap / 1e6:.1f}',
        )
        for size, size_bytes, render_s, loads in rows
    ]
    widths = [max(len(r[i]) for r in (header, *table)) for i in range(len(header))]
    for line in (header, *table):
        print('  '.join(cell.rjust(width) for cell, width in zip(line, widths, strict=True)))
    kept = f'; the reports are in {out}' if args.keep else ''
    print(f'\nmedian of {args.loads} loads (ms since navigation start) and {args.renders} renders{kept}')
    if args.keep is None:
        shutil.rmtree(out)
    return 0


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == '__main__':
    sys.exit(main())
