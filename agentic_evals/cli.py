"""`agentic-evals`: score captured traces, gate releases on the scores, inspect and compare.

Each subcommand is parse -> load -> evaluate -> render -> exit status; the work lives in
`suite` (dataset files and scoring), `traces` (trace files), `reports` (JSON, JUnit, Markdown,
terminal, gates, compare) and `inspect_view`. Exit status: 0 every gate passed, 1 a gate failed
(or `compare` found a regression), 2 usage or load error (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic_evals.reporting import EvaluationReport, ReportCase, ReportCaseFailure

from .inspect_view import render_trace, trace_json
from .offline import AmbiguousTraceError, scored_cases
from .reports.compare import compare_documents
from .reports.compare_view import print_comparison, render_comparison_markdown
from .reports.document import ReportFileError, document_from_report, dump_document, read_document
from .reports.gates import Gates, MinScore, UnknownResultError, check_gates
from .reports.junit import render_junit
from .reports.markdown import render_markdown
from .reports.progress import TraceProgress
from .reports.table import make_console, print_report
from .suite import Suite, SuiteFileError, load_dataset, load_evaluators
from .traces import LoadedTrace, TraceFileError, load_traces

__all__ = ('build_parser', 'main')

PROG = 'agentic-evals'
EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as a shell reports a command stopped with Ctrl-C."""
EXIT_STATUS = 'exit status: 0 all gates passed, 1 a gate failed, 2 usage or load error'


class UsageError(Exception):
    """A command line that parses but cannot be acted on (exit status 2)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: `sys.argv[1:]`) and return its exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2, message already printed)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (UsageError, SuiteFileError, TraceFileError, ReportFileError, UnknownResultError) as error:
        print(f'{PROG}: error: {error}', file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f'{PROG}: interrupted', file=sys.stderr)
        return EXIT_INTERRUPTED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description='Score AI-agent trajectories from OpenTelemetry traces, gate releases on the scores.',
        epilog=EXIT_STATUS,
    )
    parser.add_argument('--version', action='version', version=f'{PROG} {_version()}')
    commands = parser.add_subparsers(title='commands', metavar='COMMAND', required=True)
    _add_run(commands)
    _add_inspect(commands)
    _add_compare(commands)
    return parser


def _add_run(commands: Any) -> None:
    run = commands.add_parser(
        'run',
        help='score trace files with a dataset (or a list of evaluators) and check the gates',
        description=(
            'Score trace files with the evaluators of a pydantic-evals dataset: each case finds its trace by'
            " the root span's case_name attribute, the trace file's name, or metadata.trace_id. With"
            ' --evaluators FILE instead of a dataset, every trace is its own case. Prints a table and a'
            ' one-line verdict; writes JSON, JUnit XML and Markdown reports on request.'
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
    run.add_argument('--name', help='the report name (default: the dataset name, or the evaluators file name)')
    run.add_argument('--json', metavar='PATH', type=Path, help='write the report as JSON (agentic-evals/report@1)')
    run.add_argument('--junit', metavar='PATH', type=Path, help='write JUnit XML: one testcase per case and result')
    run.add_argument('--markdown', metavar='PATH', type=Path, help='write a Markdown summary (PR comment, job summary)')
    gates = run.add_argument_group('gates')
    gates.add_argument(
        '--allow-failures',
        action='store_true',
        help='do not fail for failed assertions, case failures or evaluator errors by themselves',
    )
    gates.add_argument(
        '--min-score',
        metavar='NAME=X',
        action='append',
        type=_min_score,
        default=[],
        help='fail unless the average of score NAME (or the pass rate of assertion NAME) is at least X; repeatable',
    )
    gates.add_argument(
        '--max-fail-rate',
        metavar='X',
        type=_fraction,
        help='fail if more than X (0..1, or N%%) of the cases have a failed assertion, an evaluator error or no result',
    )
    output = run.add_argument_group('output')
    output.add_argument('--reasons', action='store_true', help='show the reason of every result, not only of failures')
    output.add_argument('-q', '--quiet', action='store_true', help='show only the results that fail')
    output.add_argument('--no-progress', action='store_true', help='never show the progress bar on stderr')
    run.set_defaults(handler=_run)


def _add_inspect(commands: Any) -> None:
    inspect = commands.add_parser(
        'inspect',
        help='show the trajectory extracted from trace files, as the evaluators see it',
        description=(
            'Show each trace as a tree: agent runs (sub-agents nested under the tool call that delegated), tool'
            ' calls with status, failure stage, arguments and duration, model requests with tokens; then the'
            ' tool-name sequences the evaluators compare, skipped spans and loader warnings.'
        ),
        epilog='exit status: 0 shown, 2 usage or load error (or no trace matched --trace-id)',
    )
    inspect.add_argument('traces', nargs='+', metavar='TRACES', help='trace files, directories or globs')
    inspect.add_argument('--trace-id', metavar='ID', help='show only the trace whose id starts with ID')
    inspect.add_argument('--full', action='store_true', help='show arguments and results in full, not shortened')
    inspect.add_argument(
        '--json', action='store_true', help='print each trajectory as one line of JSON (JSON Lines) instead of a tree'
    )
    inspect.set_defaults(handler=_inspect)


def _add_compare(commands: Any) -> None:
    compare = commands.add_parser(
        'compare',
        help='compare two JSON reports and fail on a regression',
        description=(
            'Compare two reports written by `run --json`: the average of each score, the pass rate of each'
            ' assertion and the fail rate, with per-case changes. Fails when a score or pass rate drops (or the'
            ' fail rate rises) by more than the tolerance.'
        ),
        epilog='exit status: 0 no regression, 1 a regression, 2 usage error or unreadable report',
    )
    compare.add_argument('baseline', metavar='BASELINE', type=Path, help='the report to compare against')
    compare.add_argument('candidate', metavar='CANDIDATE', type=Path, help='the new report')
    compare.add_argument(
        '--tolerance',
        metavar='X',
        type=_tolerance,
        default=0.0,
        help='allowed drop of an average or pass rate (0..1 fractions), default 0',
    )
    compare.add_argument('--markdown', metavar='PATH', type=Path, help='write the comparison as Markdown')
    compare.set_defaults(handler=_compare)


# Argument types: argparse turns their ArgumentTypeError into a usage error (exit status 2).


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number') from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f'{text!r} is not a finite number')
    return value


def _min_score(text: str) -> MinScore:
    name, sep, threshold = text.rpartition('=')
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f'expected NAME=X (e.g. TrajectoryMatch=0.8), got {text!r}')
    return MinScore(name.strip(), _number(threshold))


def _fraction(text: str) -> float:
    value = _number(text[:-1]) / 100 if text.endswith('%') else _number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f'expected a fraction between 0 and 1 (or a percentage), got {text!r}')
    return value


def _tolerance(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f'expected a tolerance >= 0, got {text!r}')
    return value


def _version() -> str:
    try:
        return version('agentic-evals')
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
        return 'unknown'


# Subcommands.


def _run(args: argparse.Namespace) -> int:
    paths: list[str] = args.paths
    if args.evaluators is not None:
        suite, sources = load_evaluators(args.evaluators), paths
    elif len(paths) < 2:
        raise UsageError('run needs DATASET and at least one TRACES argument (or --evaluators FILE and TRACES)')
    else:
        suite, sources = load_dataset(Path(paths[0])), paths[1:]
    outputs = [p for p in (args.json, args.junit, args.markdown) if p is not None]
    for path in outputs:
        if not path.parent.is_dir():
            raise UsageError(f'{path}: cannot write: directory {path.parent} does not exist')
    gates = Gates(args.allow_failures, tuple(args.min_score), args.max_fail_rate)
    progress = TraceProgress(make_console(sys.stderr), enabled=not args.no_progress and sys.stderr.isatty())
    unused: list[str] = []
    with progress:
        report = asyncio.run(_score(suite, sources, progress, unused, name=args.name))
    _warn_unused(suite, unused)
    document = document_from_report(report)
    verdict = check_gates(document, gates, known_names=suite.evaluation_names())
    if args.json is not None:
        _write(args.json, dump_document(document))
    if args.junit is not None:
        _write(args.junit, render_junit(document, gates, verdict))
    if args.markdown is not None:
        _write(args.markdown, render_markdown(document, gates, verdict))
    console = make_console(sys.stdout)
    print_report(document, gates, console, reasons=args.reasons, quiet=args.quiet)
    console.print(verdict.summary, style='bold green' if verdict.passed else 'bold red', markup=False, soft_wrap=True)
    return EXIT_PASS if verdict.passed else EXIT_FAIL


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding='utf-8')
    except OSError as e:
        raise UsageError(f'{path}: cannot write: {e.strerror or e}') from None


async def _score(
    suite: Suite, sources: Sequence[str], progress: TraceProgress, unused: list[str], *, name: str | None
) -> EvaluationReport[Any, Any, Any]:
    """Stream the traces through the suite: memory holds one trace (or, with a dataset, the matched ones)."""
    loaded = 0

    def on_trace(trace: LoadedTrace) -> None:
        nonlocal loaded
        loaded += 1
        progress.loaded()
        for warning in trace.warnings:
            message = f'{PROG}: warning: trace {trace.name} ({trace.trace_id}): {warning}'
            progress.console.print(message, markup=False, soft_wrap=True)

    cases: list[ReportCase[Any, Any, Any]] = []
    failures: list[ReportCaseFailure[Any, Any, Any]] = []
    try:
        results = scored_cases(
            load_traces(*sources),
            dataset=suite.dataset,
            evaluators=() if suite.dataset is not None else suite.evaluators,
            on_trace=on_trace,  # type: ignore[arg-type]
            unmatched=unused,
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
        raise UsageError(f'{e} (pass the traces of one run)') from None
    if not loaded:
        raise UsageError(f'no traces found in {", ".join(sources)}')
    return EvaluationReport(name=name or suite.name, cases=cases, failures=failures)


def _warn_unused(suite: Suite, unused: Sequence[str]) -> None:
    if unused:
        names = ', '.join(unused[:5])
        more = f', and {len(unused) - 5} more' if len(unused) > 5 else ''
        print(
            f'{PROG}: warning: {len(unused)} trace(s) matched no case of {suite.name}: {names}{more}', file=sys.stderr
        )


def _inspect(args: argparse.Namespace) -> int:
    console = make_console(sys.stdout)
    wanted = args.trace_id.lower() if args.trace_id else None
    shown = 0
    for trace in load_traces(*args.traces):
        if wanted is not None and not trace.trace_id.lower().startswith(wanted):
            continue
        shown += 1
        if args.json:
            print(json.dumps(trace_json(trace), ensure_ascii=False))
        else:
            console.print(render_trace(trace, full=args.full))
            console.print()
    if not shown:
        which = f'with an id starting {args.trace_id!r} ' if wanted else ''
        raise UsageError(f'no trace {which}found in {", ".join(args.traces)}')
    return EXIT_PASS


def _compare(args: argparse.Namespace) -> int:
    comparison = compare_documents(read_document(args.baseline), read_document(args.candidate), args.tolerance)
    if args.markdown is not None:
        if not args.markdown.parent.is_dir():
            raise UsageError(f'{args.markdown}: cannot write: directory {args.markdown.parent} does not exist')
        _write(args.markdown, render_comparison_markdown(comparison))
    console = make_console(sys.stdout)
    print_comparison(comparison, console)
    style = 'bold green' if comparison.passed else 'bold red'
    console.print(comparison.summary, style=style, markup=False, soft_wrap=True)
    return EXIT_PASS if comparison.passed else EXIT_FAIL


if __name__ == '__main__':
    sys.exit(main())
