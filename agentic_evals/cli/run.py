"""`agentic-evals-otel run`: score trace files with a dataset or evaluators, check the gates, write reports."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..reports.text import one_line
from .common import (
    EXIT_FAIL,
    EXIT_PASS,
    EXIT_STATUS,
    PROG,
    UsageError,
    add_gate_arguments,
    check_writable,
    gates_from_args,
    say,
)

if TYPE_CHECKING:  # imported by `handle` when it runs: `--help` must not pay for pydantic-evals
    from pydantic_evals.reporting import EvaluationReport

    from ..offline.evaluate import GroupBy
    from ..offline.suite import Suite
    from ..reports.case_trace import CaseDetails
    from ..reports.document import ReportDocument
    from ..reports.progress import TraceProgress


def add_parser(commands: Any) -> None:
    run = commands.add_parser(
        'run',
        help='score trace files with a dataset (or a list of evaluators) and check the gates',
        description=(
            'Score trace files with the evaluators of a pydantic-evals dataset: each case finds its trace by'
            " the root span's case_name attribute, the trace file's name, metadata.trace_id, or its inputs"
            " equal to the trace's first user message. With --evaluators FILE instead of a dataset, every"
            ' trace is its own case. Prints a table and a one-line verdict; writes JSON, JUnit XML and'
            ' Markdown reports on request.'
        ),
        epilog=EXIT_STATUS,
        usage=(
            f'{PROG} run [options] DATASET TRACES [TRACES ...]\n'
            f'       {PROG} run [options] --evaluators FILE TRACES [TRACES ...]'
        ),
    )
    run.add_argument(
        'paths',
        nargs='+',
        metavar='PATHS',
        help='DATASET (a pydantic-evals dataset, YAML or JSON) then TRACES (trace files, directories or globs);'
        ' with --evaluators, only TRACES',
    )
    run.add_argument(
        '--evaluators',
        metavar='FILE',
        type=Path,
        help='a YAML or JSON file with an `evaluators:` list, run on every trace (instead of DATASET)',
    )
    run.add_argument(
        '--group-by',
        choices=['conversation'],
        help='conversation: the traces sharing a conversation (or session, thread) id are one case, each trace a'
        ' turn; a trace without one stays its own case',
    )
    run.add_argument('--name', help='the report name (default: the dataset name, or the evaluators file name)')
    run.add_argument('--json', metavar='PATH', type=Path, help='write the report as JSON (agentic-evals/report@1)')
    run.add_argument('--junit', metavar='PATH', type=Path, help='write JUnit XML: one testcase per case and result')
    run.add_argument('--markdown', metavar='PATH', type=Path, help='write a Markdown summary (PR comment, job summary)')
    run.add_argument('--html', metavar='PATH', type=Path, help='write an HTML report: one self-contained file')
    add_gate_arguments(run)
    otel = run.add_argument_group('results as OpenTelemetry evaluation events')
    otel.add_argument(
        '--emit-otel',
        action='store_true',
        help='send one log event per case and result over OTLP, configured by the OTEL_EXPORTER_OTLP_* variables'
        ' (http/protobuf or grpc); a failed export is a warning',
    )
    otel.add_argument(
        '--otel-file',
        metavar='PATH',
        type=Path,
        help="write the same events as OTLP JSON lines, as the Collector's file exporter writes logs",
    )
    output = run.add_argument_group('output')
    output.add_argument('--reasons', action='store_true', help='show the reason of every result, not only of failures')
    output.add_argument('-q', '--quiet', action='store_true', help='show only the results that fail')
    output.add_argument('--no-progress', action='store_true', help='never show the progress bar on stderr')
    output.add_argument(
        '--all-rows',
        action='store_true',
        help="print every case's rows in the table (a run of more than 50 cases prints the failing cases' only)",
    )
    run.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    import asyncio

    from ..offline.suite import load_dataset, load_evaluators
    from ..reports.document import document_from_report, dump_document
    from ..reports.gates import check_gates
    from ..reports.junit import render_junit
    from ..reports.markdown import render_markdown
    from ..reports.progress import TraceProgress
    from ..reports.table import print_report
    from ..reports.terminal import make_console, print_verdict
    from .common import write_text

    paths: list[str] = args.paths
    if args.evaluators is not None:
        suite, sources = load_evaluators(args.evaluators), paths
    elif len(paths) < 2:
        raise UsageError('run needs DATASET and at least one TRACES argument (or --evaluators FILE and TRACES)')
    else:
        suite, sources = load_dataset(Path(paths[0])), paths[1:]
    for path in (args.json, args.junit, args.markdown, args.html, args.otel_file):
        if path is not None:
            check_writable(path)
    if args.emit_otel:  # an unusable protocol or a missing exporter is said before any work
        from ..reports.otel_events import otlp_protocol

        otlp_protocol()
    gates = gates_from_args(args, expected=suite.expected_results())
    progress = TraceProgress(make_console(sys.stderr), enabled=not args.no_progress and sys.stderr.isatty())
    unused: list[str] = []
    # Only the JSON and HTML reports and the events read a case's timeline, alignments and agent span.
    drawn = any(p is not None for p in (args.json, args.html, args.otel_file)) or args.emit_otel
    details: dict[int, CaseDetails] | None = {} if drawn else None
    reports: list[EvaluationReport[Any, Any, Any]] = []
    with progress:
        scoring = _score(suite, sources, progress, unused, details, name=args.name, group_by=args.group_by)
        asyncio.run(_kept(scoring, reports))
    report = reports[0]
    _warn_unused(suite, unused)
    document = document_from_report(
        report, None if details is None else lambda case: details.get(id(case)), suite.expected_results()
    )
    verdict = check_gates(document, gates, known_names=suite.evaluation_names())
    if args.json is not None:
        write_text(args.json, dump_document(document))
    if args.junit is not None:
        write_text(args.junit, render_junit(document, gates, verdict))
    if args.markdown is not None:
        write_text(args.markdown, render_markdown(document, gates, verdict))
    if args.html is not None:
        from ..reports.html import render_html

        write_text(args.html, render_html(document, gates, verdict))
    if args.otel_file is not None or args.emit_otel:
        _export_events(document, args.otel_file, emit=args.emit_otel)
    console = make_console(sys.stdout)
    print_report(document, gates, console, reasons=args.reasons, quiet=args.quiet, all_rows=args.all_rows)
    print_verdict(console, verdict.summary, passed=verdict.passed)
    return EXIT_PASS if verdict.passed else EXIT_FAIL


def _export_events(document: ReportDocument, path: Path | None, *, emit: bool) -> None:
    """The results as `gen_ai.evaluation.result` events: to a file, over OTLP, or both, with one timestamp.

    A failed export is a warning on stderr: the verdict is the gates', never the collector's.
    """
    import time

    from ..reports.otel_events import emit_otlp, render_otlp_json_lines
    from .common import write_text

    now = time.time_ns()
    if path is not None:
        write_text(path, render_otlp_json_lines(document, time_unix_nano=now))
    if emit:
        for warning in emit_otlp(document, time_unix_nano=now):
            say(one_line(f'{PROG}: warning: {warning}'))


async def _kept(
    scoring: Awaitable[EvaluationReport[Any, Any, Any]], into: list[EvaluationReport[Any, Any, Any]]
) -> None:
    """Await `scoring` and keep its report in `into`: the task `asyncio.run` makes must not hold the report.

    On CPython 3.11 (3.10 has no such step), `asyncio.run` puts back the SIGINT handler when its task
    ends, and `signal.signal` and `signal.getsignal` try the handler they return against the `Handlers`
    enum, whose error message formats the handler's repr: the task's, with its whole result's (`reprlib`
    cuts it only once made). At 10,000 cases: two 35 MB reprs, 5.7 s on a busy 2-core machine, thrown away.
    """
    into.append(await scoring)


async def _score(
    suite: Suite,
    sources: Sequence[str],
    progress: TraceProgress,
    unused: list[str],
    details: dict[int, CaseDetails] | None,
    *,
    name: str | None,
    group_by: GroupBy | None = None,
) -> EvaluationReport[Any, Any, Any]:
    """Stream the traces through the suite: memory holds one trace (or, with a dataset, the matched ones;
    grouped by conversation, every trace that has a conversation id). Each scored case's timeline and
    alignments go into `details` (by the case's `id`; none when `None`), so no tree outlives its case."""
    from pydantic_evals.reporting import EvaluationReport, ReportCase, ReportCaseFailure

    from ..offline.evaluate import scored_cases
    from ..offline.matching import AmbiguousTraceError
    from ..reports.case_trace import case_details
    from ..traces import LoadedTrace, load_traces

    loaded = 0

    def on_trace(trace: LoadedTrace) -> None:
        nonlocal loaded
        loaded += 1
        progress.loaded()
        for warning in trace.warnings:
            message = f'{PROG}: warning: trace {trace.name} ({trace.trace_id}): {warning}'
            progress.console.print(one_line(message), markup=False, soft_wrap=True)

    def on_warning(message: str) -> None:  # a stray file skipped, a span the loader could not keep
        progress.console.print(one_line(f'{PROG}: warning: {message}'), markup=False, soft_wrap=True)

    cases: list[ReportCase[Any, Any, Any]] = []
    failures: list[ReportCaseFailure[Any, Any, Any]] = []
    try:
        results = scored_cases(
            load_traces(*sources, on_warning=on_warning),
            dataset=suite.dataset,
            evaluators=() if suite.dataset is not None else suite.evaluators,
            on_trace=on_trace,  # type: ignore[arg-type]
            unmatched=unused,
            group_by=group_by,
            on_scored=None
            if details is None
            else lambda case, trace: details.__setitem__(id(case), case_details(trace.tree, case)),
        )
        async for result in results:
            if not cases and not failures:
                progress.start_scoring(len(suite.dataset.cases) if suite.dataset is not None else None)
            if isinstance(result, ReportCase):
                cases.append(result)
            else:
                failures.append(result)
            progress.scored()
    except AmbiguousTraceError as e:
        # pydantic-ai records a conversation's history on every turn, so its turns share a first user message
        turns = 'first user message' in e.rules and group_by is None
        hint = 'pass the traces of one run' + (', or group turns with --group-by conversation' if turns else '')
        raise UsageError(f'{e} ({hint})') from None
    if not loaded:
        raise UsageError(f'no traces found in {", ".join(sources)}')
    return EvaluationReport(name=name or suite.name, cases=cases, failures=failures)


def _warn_unused(suite: Suite, unused: Sequence[str]) -> None:
    if unused:
        names = ', '.join(unused[:5])
        more = f', and {len(unused) - 5} more' if len(unused) > 5 else ''
        say(one_line(f'{PROG}: warning: {len(unused)} trace(s) matched no case of {suite.name}: {names}{more}'))
