"""Where `agentic-evals-otel run` spends its time on 10,000 realistic traces: wall time and a cProfile breakdown.

Usage (from the repository root): `python -m benchmarks.run_profile [--traces N] [--dir DIR] [--top K]`, or
`make bench-run`. Extra arguments after `--` go to `run` (`-- --all-rows`, say).

The workload (`benchmarks/workload.py`: N traces of the support agent and its billing sub-agent, about 20
spans each, and a YAML dataset of 7 or 8 evaluators per case) is generated into DIR once and reused
(`--regenerate` makes it again). Then, each in a fresh interpreter, so each pays for its own imports as a
user's command does:

- wall: `agentic_evals.cli.main(['run', DATASET, TRACES, '--no-progress', ...])` in-process, timed with
  `time.perf_counter` (and `time.process_time`), stdout written to a file as in a CI log;
- profile: the same call under `cProfile`, and the share of its total time in each part below, from the
  cumulative time of the functions that do it (a profiler slows pure-Python code the most, so the shares
  lean towards it: they say where the time goes, the wall time says how much there is).

| part | measured as the cumulative time of |
| --- | --- |
| dataset YAML parsing | `offline/suite.py` `_read` (read, parse, compose, construct) |
| dataset building | `offline/suite.py` `_check_names` and `_build` (pydantic-evals' `Dataset.from_dict`) |
| trace loading | `traces/_load.py` `load_traces` and its generator `_stream` (every resumption) |
| extraction and evaluators | `cli/run.py` `_score`, less the trace loading and the case details (rows spooled too) |
| case details | `reports/case_trace.py` `case_details` (timelines, alignments) |
| report document and gates | `ReportBuilder.document` (the spooled document), `check_gates` (cases read back) |
| terminal table | `views/table.py` `print_report` |
| report repr on the way out | `asyncio/base_futures.py` `_future_repr_info` (a done task's repr, its result's too) |
| the rest | imports, argument parsing, the verdict line, everything else |
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .workload import DATASET_FILE, SEED, TRACES, TRACES_FILE, generate

ROOT = Path(__file__).resolve().parent.parent

# (part, [(file suffix, function name), ...]); the cumulative times of the functions are added
PARTS: list[tuple[str, list[tuple[str, str]]]] = [
    ('dataset YAML parsing', [('agentic_evals/offline/suite.py', '_read')]),
    (
        'dataset building',
        [('agentic_evals/offline/suite.py', '_check_names'), ('agentic_evals/offline/suite.py', '_build')],
    ),
    ('trace loading', [('agentic_evals/traces/_load.py', 'load_traces'), ('agentic_evals/traces/_load.py', '_stream')]),
    ('case details', [('agentic_evals/reports/case_trace.py', 'case_details')]),
    (
        'report document and gates',
        [
            ('agentic_evals/reports/stream.py', 'document'),
            ('agentic_evals/reports/judge.py', 'check_gates'),
        ],
    ),
    ('terminal table', [('agentic_evals/views/table.py', 'print_report')]),
    ('report repr on the way out', [('asyncio/base_futures.py', '_future_repr_info')]),
]
SCORE = ('agentic_evals/cli/run.py', '_score')
MAIN = ('agentic_evals/cli/__init__.py', 'main')


def _argv(directory: Path, extra: list[str]) -> list[str]:
    return ['run', str(directory / DATASET_FILE), str(directory / TRACES_FILE), '--no-progress', *extra]


def _call(argv: list[str], output: Path) -> int:
    from agentic_evals.cli import main

    with output.open('w', encoding='utf-8') as stream:
        saved, sys.stdout = sys.stdout, stream
        try:
            return main(argv)
        finally:
            sys.stdout = saved


def _cumulative(stats: pstats.Stats, suffix: str, name: str) -> float:
    raw = stats.stats  # type: ignore[attr-defined]
    return sum(
        float(entry[3]) for (path, _, function), entry in raw.items() if function == name and path.endswith(suffix)
    )


def inner(mode: str, directory: Path, extra: list[str], result: Path) -> None:
    """One measurement, in this interpreter; its figures are written to `result` as JSON.

    SIGINT gets Python's own handler first, as in a terminal: a shell starts a background job with
    SIGINT ignored, and then `asyncio.run` leaves the handler alone (and skips what it costs).
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)
    output = result.with_suffix('.out')
    argv = _argv(directory, extra)
    if mode == 'wall':
        wall, cpu = time.perf_counter(), time.process_time()
        status = _call(argv, output)
        figures: dict[str, object] = {
            'wall': time.perf_counter() - wall,
            'cpu': time.process_time() - cpu,
            'status': status,
        }
    else:
        profile = cProfile.Profile()
        status = profile.runcall(_call, argv, output)
        stats = pstats.Stats(profile)
        total = _cumulative(stats, *MAIN)
        parts = {part: sum(_cumulative(stats, *f) for f in functions) for part, functions in PARTS}
        parts = {part: float(seconds) for part, seconds in parts.items()}
        scoring = _cumulative(stats, *SCORE) - parts['trace loading'] - parts['case details']
        parts = {**parts, 'extraction and evaluators': scoring}
        parts['the rest'] = total - sum(parts.values())
        figures = {'total': total, 'parts': parts, 'status': status}
        stats.dump_stats(str(result.with_suffix('.prof')))
    figures['output_lines'] = sum(1 for _ in output.open(encoding='utf-8'))
    result.write_text(json.dumps(figures))


def _measure(mode: str, directory: Path, extra: list[str], scratch: Path) -> dict[str, object]:
    result = scratch / f'{mode}.json'
    command = [sys.executable, '-m', 'benchmarks.run_profile', '--inner', mode, '--dir', str(directory)]
    subprocess.run([*command, '--result', str(result), '--', *extra], check=True, cwd=ROOT)
    figures: dict[str, object] = json.loads(result.read_text())
    return figures


ORDER = [
    'dataset YAML parsing',
    'dataset building',
    'trace loading',
    'extraction and evaluators',
    'case details',
    'report document and gates',
    'terminal table',
    'report repr on the way out',
    'the rest',
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.run_profile', description=__doc__.splitlines()[0])
    parser.add_argument('--traces', type=int, default=TRACES)
    parser.add_argument('--dir', type=Path, help='the workload directory (default: one per size under the temp dir)')
    parser.add_argument('--regenerate', action='store_true', help='generate the workload even if DIR has one')
    parser.add_argument('--top', type=int, default=0, help='also print the K functions of most cumulative time')
    parser.add_argument('--inner', choices=['wall', 'profile'], help=argparse.SUPPRESS)
    parser.add_argument('--result', type=Path, help=argparse.SUPPRESS)
    parser.add_argument('extra', nargs='*', help='arguments added to the run command (after --)')
    args = parser.parse_args(argv)
    directory: Path = args.dir or Path(tempfile.gettempdir()) / f'agentic-evals-bench-run-{args.traces}-{SEED}'
    if args.inner is not None:
        inner(args.inner, directory, args.extra, args.result)
        return 0
    if args.regenerate or not (directory / TRACES_FILE).exists() or not (directory / DATASET_FILE).exists():
        start = time.perf_counter()
        generate(directory, traces=args.traces)
        print(f'generated {args.traces:,} traces into {directory} in {time.perf_counter() - start:.0f} s')
    traces_bytes = (directory / TRACES_FILE).stat().st_size
    dataset_bytes = (directory / DATASET_FILE).stat().st_size
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        wall = _measure('wall', directory, args.extra, Path(scratch))
        profile = _measure('profile', directory, args.extra, Path(scratch))
        if args.top:
            stats = pstats.Stats(str(Path(scratch) / 'profile.prof'))
            stats.sort_stats('cumulative').print_stats(args.top)
    print(
        f'{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, load {load:.2f};'
        f' {args.traces:,} traces ({traces_bytes / 1e6:,.0f} MB), dataset {dataset_bytes / 1e6:,.1f} MB;'
        f' run {" ".join(["--no-progress", *args.extra])}: exit status {wall["status"]},'
        f' {wall["output_lines"]:,} lines of output'
    )
    print(f'wall {wall["wall"]:.1f} s (CPU {wall["cpu"]:.1f} s); under cProfile {profile["total"]:.1f} s')
    parts = profile['parts']
    assert isinstance(parts, dict) and isinstance(profile['total'], float)
    width = max(len(part) for part in ORDER)
    print(f'| {"part":<{width}} | cProfile s | share |')
    print(f'|{"-" * (width + 2)}|-----------:|------:|')
    for part in ORDER:
        seconds = parts[part]
        print(f'| {part:<{width}} | {seconds:10.2f} | {seconds / profile["total"]:5.1%} |')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
