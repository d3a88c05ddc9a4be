"""`agentic-evals-otel run`: score trace files with a dataset or evaluators, check the gates, write reports."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..views.text import one_line
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
    from ..engines.local import Outcome
    from ..engines.work import Job
    from ..offline.suite import Suite
    from ..reports.document import CaseFailure, CaseResult, ReportDocument
    from ..reports.gates import Gates
    from ..reports.stream import ReportBuilder
    from ..reports.verdict import Verdict
    from .progress import TraceProgress


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
    run.add_argument(
        '--results',
        metavar='PATH',
        help='write every result as a JSON line (case, trace_id, kind, name, evaluator, value, reason): a file; with'
        ' --engine ray, a directory of part files',
    )
    add_gate_arguments(run)
    scale = run.add_argument_group('scale')
    scale.add_argument(
        '--workers',
        type=_workers,
        default=1,
        metavar='N',
        help='score in N processes of this machine (default: 1); the report is the same',
    )
    scale.add_argument(
        '--engine',
        choices=['local', 'ray'],
        default='local',
        help='local (this machine, --workers processes) or ray (a Ray cluster: --address, or a local one);'
        ' ray needs the extra agentic-evals-otel[ray]',
    )
    scale.add_argument('--address', metavar='ADDRESS', help='the Ray cluster to connect to (with --engine ray)')
    scale.add_argument(
        '--judge-concurrency',
        type=_workers,
        default=4,
        metavar='N',
        help='with --engine ray, the LLM judges of at most N cases wait on the model at once (default: 4)',
    )
    scale.add_argument(
        '--results-format',
        choices=['jsonl', 'parquet'],
        default='jsonl',
        help='the format of the --results part files with --engine ray (default: jsonl)',
    )
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


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f'expected a whole number, 1 or more, got {text!r}')
    return value


def handle(args: argparse.Namespace) -> int:
    from ..engines.work import Job
    from ..offline.suite import load_dataset, load_evaluators
    from ..reports.judge import check_gates
    from ..reports.stream import ReportBuilder
    from ..views.table import print_report
    from ..views.terminal import make_console, print_verdict
    from .progress import TraceProgress

    paths: list[str] = args.paths
    if args.evaluators is not None:
        suite, sources = load_evaluators(args.evaluators), paths
    elif len(paths) < 2:
        raise UsageError('run needs DATASET and at least one TRACES argument (or --evaluators FILE and TRACES)')
    else:
        suite, sources = load_dataset(Path(paths[0])), paths[1:]
    _check_scale(args)
    for path in (args.json, args.junit, args.markdown, args.html, args.otel_file):
        if path is not None:
            check_writable(path)
    if args.results is not None and args.engine == 'local':
        check_writable(Path(args.results))
    if args.emit_otel:  # an unusable protocol or a missing exporter is said before any work
        from ..views.otlp_export import otlp_protocol

        otlp_protocol()
    gates = gates_from_args(args, expected=suite.expected_results())
    progress = TraceProgress(make_console(sys.stderr), enabled=not args.no_progress and sys.stderr.isatty())
    # Only the JSON and HTML reports and the events read a case's timeline, alignments and agent span.
    drawn = any(p is not None for p in (args.json, args.html, args.otel_file)) or args.emit_otel
    job = Job.of(suite, details=drawn, group_by=args.group_by)
    name = args.name or suite.name
    with ReportBuilder(name, expected=suite.expected_results(), rename=suite.dataset is None) as builder:
        with progress:
            outcome = _score(job, sources, builder, progress, args)
        document = builder.document()
        if outcome.unmatched_count:
            _warn_unused(suite, outcome.unmatched, outcome.unmatched_count)
        verdict = check_gates(document, gates, known_names=suite.evaluation_names())
        _write_reports(args, document, gates, verdict)
        console = make_console(sys.stdout)
        print_report(document, gates, verdict, console, reasons=args.reasons, quiet=args.quiet, all_rows=args.all_rows)
        print_verdict(console, verdict.summary, passed=verdict.passed)
    return EXIT_PASS if verdict.passed else EXIT_FAIL


def _check_scale(args: argparse.Namespace) -> None:
    """The engine flags that cannot go together, and Ray's presence, said before any work."""
    if args.engine == 'ray':
        if args.workers > 1:
            raise UsageError('--workers is for --engine local; a Ray cluster uses the CPUs it has')
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UsageError("--engine ray needs Ray: pip install 'agentic-evals-otel[ray]'") from None
    elif args.address is not None:
        raise UsageError('--address names a Ray cluster: use it with --engine ray')
    elif args.judge_concurrency != 4:
        raise UsageError('--judge-concurrency is for --engine ray (locally, cases are judged one at a time)')
    if args.group_by is not None and (args.workers > 1 or args.engine == 'ray'):
        raise UsageError('--group-by conversation needs every turn in one process: leave out --workers and --engine')


def _write_reports(args: argparse.Namespace, document: ReportDocument, gates: Gates, verdict: Verdict) -> None:
    """Every report file asked for, each written case by case from the spooled document."""
    from ..reports.document import document_chunks
    from ..reports.judge import judged
    from ..views.junit import junit_chunks
    from ..views.markdown import markdown_chunks
    from .common import write_chunks

    if args.json is not None:  # with every verdict: the run's, and each case's as it is written
        write_chunks(args.json, document_chunks(judged(document, gates, verdict)))
    if args.junit is not None:
        write_chunks(args.junit, junit_chunks(document, gates, verdict))
    if args.markdown is not None:
        write_chunks(args.markdown, markdown_chunks(document, gates, verdict))
    if args.html is not None:
        from ..views.html import html_chunks

        write_chunks(args.html, html_chunks(document, gates, verdict))
    if args.results is not None and args.engine == 'local':
        write_chunks(Path(args.results), _result_lines(document))
    if args.otel_file is not None or args.emit_otel:
        _export_events(document, args.otel_file, emit=args.emit_otel)


def _result_lines(document: ReportDocument) -> Iterator[str]:
    import json

    from ..reports.stream import result_records

    entries: Iterable[CaseResult | CaseFailure] = itertools.chain(document.cases, document.failures)
    for entry in entries:
        for record in result_records(entry):
            yield json.dumps(record) + '\n'


def _export_events(document: ReportDocument, path: Path | None, *, emit: bool) -> None:
    """The results as `gen_ai.evaluation.result` events: to a file, over OTLP, or both, with one timestamp.

    A failed export is a warning on stderr: the verdict is the gates', never the collector's.
    """
    import time

    from ..views.otlp_export import emit_otlp, otlp_json_line_chunks
    from .common import write_chunks

    now = time.time_ns()
    if path is not None:
        write_chunks(path, otlp_json_line_chunks(document, time_unix_nano=now))
    if emit:
        for warning in emit_otlp(document, time_unix_nano=now):
            say(one_line(f'{PROG}: warning: {warning}'))


def _score(
    job: Job, sources: Sequence[str], builder: ReportBuilder, progress: TraceProgress, args: argparse.Namespace
) -> Outcome:
    """Stream the traces through the job's suite into `builder`, with the progress bar and warnings on stderr."""
    from ..engines.local import Listener, run_local
    from ..offline.matching import AmbiguousTraceError

    def trace_warnings(name: str, trace_id: str, warnings: Sequence[str]) -> None:
        for warning in warnings:
            message = f'{PROG}: warning: trace {name} ({trace_id}): {warning}'
            progress.console.print(one_line(message), markup=False, soft_wrap=True)

    def on_warning(message: str) -> None:  # a stray file skipped, a span the loader could not keep
        progress.console.print(one_line(f'{PROG}: warning: {message}'), markup=False, soft_wrap=True)

    started = False

    def scored(count: int) -> None:
        nonlocal started
        if not started:
            started = True
            progress.start_scoring(len(job.cases) if job.index is not None else None)
        for _ in range(count):
            progress.scored()

    def loaded(count: int) -> None:
        for _ in range(count):
            progress.loaded()

    listener = Listener(loaded=loaded, trace_warnings=trace_warnings, scored=scored, warning=on_warning)
    try:
        if args.engine == 'ray':
            from ..engines.ray import run_ray

            outcome = run_ray(
                job,
                sources,
                builder,
                address=args.address,
                results=args.results,
                results_format=args.results_format,
                listener=listener,
                judge_concurrency=args.judge_concurrency,
            )
        else:
            outcome = run_local(job, sources, builder, workers=args.workers, listener=listener)
    except AmbiguousTraceError as e:
        # pydantic-ai records a conversation's history on every turn, so its turns share a first user message
        turns = 'first user message' in e.rules and job.group_by is None
        hint = 'pass the traces of one run' + (', or group turns with --group-by conversation' if turns else '')
        raise UsageError(f'{e} ({hint})') from None
    if not outcome.traces:
        raise UsageError(f'no traces found in {", ".join(sources)}')
    return outcome


def _warn_unused(suite: Suite, unused: Sequence[str], count: int) -> None:
    names = ', '.join(unused[:5])
    more = f', and {count - 5} more' if count > 5 else ''
    say(one_line(f'{PROG}: warning: {count} trace(s) matched no case of {suite.name}: {names}{more}'))
