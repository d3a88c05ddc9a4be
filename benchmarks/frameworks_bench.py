"""Extraction on every framework fixture's trace, replicated to about 2,000 tool calls.

Usage (from the repository root): `python -m benchmarks.frameworks_bench [--quick] [--compare-only]
[--baseline REV|none] [--current REV]`, or `make bench-frameworks`.

Each `fixtures/frameworks/*/*.otlp.jsonl` holds one trace of the same scenario (5 tool calls; of a file
with several traces, the one with the most calls). Its spans are copied 400 times under one new root,
with fresh span ids and each copy shifted in time after the previous one, so the tree holds the
scenario 2,000 calls long. Every repetition
builds a brand-new `SpanTree` of brand-new `SpanNode`s from that plan (outside the timed region)
and times, with the collector off:

- extraction: `extract_trajectory(tree)`, then `tool_calls` and `model_requests` (every record);
- the six evaluators of `benchmarks.run` (without `ctx.metrics['requests']`, so both
  `MaxModelRequests` count spans), ours and, where pydantic-evals' built-ins read the route's spans
  (they read pydantic-ai/GenAI-shaped spans only), the built-ins on the same tree, sides
  alternating; every pair of values must agree.

The replicated trajectory must hold 400 times the single trace's calls and requests, with the same
names in order; a difference stops the run with exit status 1. The pydantic-ai benchmark tree of
`benchmarks.trees` (2,000 tool spans) is measured the same way, for comparison.

Then extraction before and after, in the same run: the package at `--baseline` (default 4eb06c0, the commit
before issue 22's cross-check; also `$AGENTIC_EVALS_BENCH_BASELINE`; `none` skips this) against `--current`
(default the working tree; also `$AGENTIC_EVALS_BENCH_CURRENT`), each `git archive`d into a temporary directory
that is removed afterwards and imported by its own worker process. Both workers load the same replicas, pickled
by this process, of the fixtures that existed at the baseline commit, and time extraction on a fresh tree on
request, sides alternating on every fixture in every repetition (9, or 3 with --quick); fixtures only the current
side has are timed on it alone. The worst fixture's extraction is then profiled with cProfile on both sides.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import io
import json
import os
import pickle
import pstats
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol, cast

from pydantic_evals.evaluators import agentic as builtin_agentic
from pydantic_evals.otel.span_tree import SpanNode, SpanTree

import agentic_evals as ours

from .run import (
    COMBINED_TOOL_SPANS,
    SEED,
    Case,
    Mismatch,
    Pair,
    agreed_values,
    combined_pairs,
    machine,
    make_context,
    milliseconds,
    ratio,
    run_side,
    suite_pairs,
    table,
)
from .trees import AgentRunPlan, PlannedSpan, plan_run

FIXTURES = Path(__file__).resolve().parents[1] / 'fixtures' / 'frameworks'
COPIES = 400
ROOT_ID = 1


class Source(Protocol):
    def build_tree(self) -> SpanTree: ...


@dataclass(frozen=True)
class Replica:
    """One fixture's trace planned `copies` times under one root; `build_tree` makes new nodes each time."""

    trace_id: int
    spans: tuple[PlannedSpan, ...]

    @classmethod
    def of(cls, nodes: Sequence[SpanNode], copies: int) -> Replica:
        nodes = sorted(nodes, key=lambda n: n.start_timestamp)
        index = {n.span_id: i for i, n in enumerate(nodes)}
        origin = nodes[0].start_timestamp
        period = max(n.end_timestamp for n in nodes) - origin + timedelta(milliseconds=1)
        spans: list[PlannedSpan] = []
        for k in range(copies):
            shift, base = period * k, ROOT_ID + 1 + k * len(nodes)
            for n in nodes:
                parent = index.get(n.parent_span_id) if n.parent_span_id is not None else None
                spans.append(
                    PlannedSpan(
                        name=n.name,
                        span_id=base + index[n.span_id],
                        parent_span_id=ROOT_ID if parent is None else base + parent,
                        start=n.start_timestamp + shift,
                        end=n.end_timestamp + shift,
                        attributes=tuple(n.attributes.items()),
                        status=n.status,
                    )
                )
        root = PlannedSpan('benchmark', ROOT_ID, None, origin, origin + period * copies, (), 'unset')
        return cls(nodes[0].trace_id, (root, *spans))

    def build_tree(self) -> SpanTree:
        tree = SpanTree()
        tree.add_spans([span.node(self.trace_id) for span in self.spans])
        return tree


@dataclass(frozen=True)
class Route:
    name: str
    source: Source
    spans: int
    calls: int
    pairs: tuple[Pair, ...]
    builtins_read_it: bool


@dataclass(frozen=True)
class Row:
    route: Route
    extraction: float
    ours_suite: float
    builtin_suite: float | None
    suite_ratio: float | None


def case_trace(path: Path) -> ours.LoadedTrace:
    """The fixture's trace, or of several (AutoGen's side traces of one `create_agent` span, LangGraph.js runs whose
    context did not propagate), the one with the most tool calls."""
    traces = ours.read_traces(path)
    return max(traces, key=lambda t: len(ours.extract_trajectory(t.tree).call_names(include_failed=True)))


def replicated(path: Path) -> Route:
    """The route of one fixture, checked: 400 copies extract as 400 times the single trace."""
    trace = case_trace(path)
    single = ours.extract_trajectory(trace.tree)
    replica = Replica.of(list(trace.tree), COPIES)
    whole = ours.extract_trajectory(replica.build_tree())
    name = str(path.relative_to(FIXTURES)).removesuffix('.otlp.jsonl')
    names = single.call_names(include_failed=True)
    if whole.call_names(include_failed=True) != names * COPIES:
        raise Mismatch(f'{name}: the replicated trace does not extract its calls {COPIES} times in order')
    for what in ('tool_calls', 'model_requests'):
        if len(getattr(whole, what)) != COPIES * len(getattr(single, what)):
            raise Mismatch(f"{name}: {what} is not {COPIES} times the single trace's")
    # The built-ins read the trace when they find the same calls and requests as ours; the
    # arguments too, or `ArgumentCorrectness` is left out on both sides.
    theirs = builtin_agentic._extract_tool_calls(trace.tree, include_failed=True)
    readable = [c.name for c in theirs] == names
    readable &= builtin_agentic._count_model_requests(trace.tree) == single.request_count()
    with_arguments = not readable or all(c.arguments is not None for c in theirs)
    trajectory = whole.call_names()
    last_trip = next(c for c in reversed(whole.tool_calls) if c.name == 'book_trip' and c.status == 'ok')
    pairs = suite_pairs(trajectory, 'book_trip', dict(last_trip.arguments or {}))
    pairs = pairs if with_arguments else tuple(p for p in pairs if p.label != 'ArgumentCorrectness')
    return Route(name, replica, len(replica.spans), len(names) * COPIES, pairs, readable)


def reference() -> Route:
    plan: AgentRunPlan = plan_run(tool_spans=COMBINED_TOOL_SPANS, seed=SEED)
    name = 'benchmarks.trees (pydantic-ai shape)'
    return Route(name, plan, len(plan.spans), len(plan.calls), combined_pairs(plan), True)


def timed_extraction(tree: SpanTree) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        trajectory = ours.extract_trajectory(tree)
        trajectory.tool_calls  # noqa: B018 (the records are the point)
        trajectory.model_requests  # noqa: B018
        return time.perf_counter() - start
    finally:
        gc.enable()


def measure(route: Route, repeats: int) -> Row:
    """One untimed warm-up, then `repeats` fresh trees for extraction and as many for the suite."""
    extraction: list[float] = []
    ours_times: list[float] = []
    builtin_times: list[float] = []
    case = Case(route.name, plan_run(tool_spans=1), route.pairs, repeats)  # names agreed_values' mismatches
    for repetition in range(-1, repeats):
        seconds = timed_extraction(route.source.build_tree())
        tree = route.source.build_tree()
        sides = [('ours', [p.ours for p in route.pairs])]
        if route.builtins_read_it:
            sides.insert(repetition % 2, ('builtin', [p.builtin for p in route.pairs]))
        results: dict[str, tuple[float, list[object]]] = {}
        for side, evaluators in sides:
            results[side] = run_side(evaluators, make_context(tree, {}))
        if route.builtins_read_it:
            agreed_values(case, results['builtin'][1], results['ours'][1])
            if repetition >= 0:
                builtin_times.append(results['builtin'][0])
        if repetition >= 0:
            extraction.append(seconds)
            ours_times.append(results['ours'][0])
        del tree
    return Row(
        route,
        statistics.median(extraction),
        statistics.median(ours_times),
        statistics.median(builtin_times) if builtin_times else None,
        statistics.median(b / o for b, o in zip(builtin_times, ours_times, strict=True)) if builtin_times else None,
    )


def results_table(rows: list[Row], repeats: int) -> str:
    reference_us = rows[-1].extraction / rows[-1].route.spans * 1e6
    cells = []
    for row in rows:
        us = row.extraction / row.route.spans * 1e6
        cells.append(
            [
                row.route.name,
                f'{row.route.spans:,}',
                f'{row.route.calls:,}',
                milliseconds(row.extraction),
                f'{us:.2f}',
                f'{us / reference_us:.2f}x',
                str(len(row.route.pairs)),
                milliseconds(row.ours_suite),
                '-' if row.builtin_suite is None else milliseconds(row.builtin_suite),
                '-' if row.suite_ratio is None else ratio(row.suite_ratio),
            ]
        )
    header = [
        f'route ({repeats} runs each)',
        'spans',
        'calls',
        'extraction ms',
        'µs/span',
        'vs trees',
        'suite',
        'suite ours ms',
        'suite built-in ms',
        'built-in/ours',
    ]
    return table(cells, header)


# --- Before and after in one run (issue 22) -------------------------------------------------------------------------
#
# Two worker processes, each importing `agentic_evals` from its own copy of the package (`git archive` of a commit into
# a temporary directory, or the working tree), load the same pickled replicas and time extraction on request; the parent
# alternates the sides (baseline then current, current then baseline) on every fixture in every repetition.

ALONE_REPEATS = 3  # runs of the fixtures only the current side has (the route table times them too)
# The last commit before issue 22's cross-check (calls in issue order, arguments joined from the issuing call).
DEFAULT_BASELINE = '4eb06c0'
BASELINE_ENV = 'AGENTIC_EVALS_BENCH_BASELINE'
CURRENT_ENV = 'AGENTIC_EVALS_BENCH_CURRENT'
REPO = FIXTURES.parents[1]
WORKER_BOOTSTRAP = (
    'import sys; sys.path[:0] = sys.argv[1:3]; from benchmarks.frameworks_bench import worker; sys.exit(worker())'
)


def git(*args: str) -> bytes:
    return subprocess.run(['git', '-C', str(REPO), *args], check=True, capture_output=True).stdout


def resolve(rev: str) -> str:
    """The commit's short hash, or '' for the working tree."""
    return '' if rev in ('', 'worktree') else git('rev-parse', '--short', f'{rev}^{{commit}}').decode().strip()


def package_copy(commit: str, into: Path) -> Path:
    """A directory whose `agentic_evals` is the package at `commit` (the working tree when '')."""
    if not commit:
        return REPO
    into.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(git('archive', commit, 'agentic_evals'))) as archive:
        archive.extractall(into)  # our own commit's files
    return into


def baseline_fixtures(commit: str) -> set[str]:
    """The fixture files (relative to FIXTURES) that existed at `commit`."""
    listed = git('ls-tree', '-r', '--name-only', commit, '--', str(FIXTURES.relative_to(REPO))).decode().split()
    prefix = f'{FIXTURES.relative_to(REPO).as_posix()}/'
    return {p.removeprefix(prefix) for p in listed if p.endswith('.otlp.jsonl')}


def worker() -> int:
    """A side of the comparison: JSON commands on stdin, one JSON answer per line on stdout."""
    replicas: list[Replica] = []
    for line in sys.stdin:
        command = json.loads(line)
        op = command['op']
        if op == 'load':
            with open(command['path'], 'rb') as f:
                replicas = [Replica(trace_id, spans) for trace_id, spans in pickle.load(f)]
            answer: object = {'package': str(Path(ours.__file__).parent), 'routes': [summary(r) for r in replicas]}
        elif op == 'time':
            answer = timed_extraction(replicas[command['index']].build_tree())
        elif op == 'profile':
            answer = profiled(replicas[command['index']], command['top'])
        else:
            return 0
        sys.stdout.write(json.dumps(answer) + '\n')
        sys.stdout.flush()
    return 0


def summary(replica: Replica) -> dict[str, object]:
    """What this side extracts from the replica (also its warm-up): calls, requests, and the names in order."""
    trajectory = ours.extract_trajectory(replica.build_tree())
    names = trajectory.call_names(include_failed=True)
    return {
        'calls': len(trajectory.tool_calls),
        'requests': len(trajectory.model_requests),
        'names': hashlib.sha256('\n'.join(names).encode()).hexdigest()[:12],
    }


def profiled(replica: Replica, top: int) -> str:
    """cProfile of one extraction of a fresh tree: the `top` functions by own time, then by cumulative time."""
    tree = replica.build_tree()
    profile = cProfile.Profile()
    gc.collect()
    profile.enable()
    trajectory = ours.extract_trajectory(tree)
    trajectory.tool_calls  # noqa: B018
    trajectory.model_requests  # noqa: B018
    profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out).strip_dirs()
    stats.sort_stats('tottime').print_stats(top)
    stats.sort_stats('cumulative').print_stats(top)
    return out.getvalue()


class Side:
    """One worker process: `agentic_evals` imported from `root`."""

    def __init__(self, label: str, root: Path) -> None:
        self.label = label
        self.process = subprocess.Popen(
            [sys.executable, '-c', WORKER_BOOTSTRAP, str(root), str(REPO)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=root,
        )

    def ask(self, **command: object) -> object:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(command) + '\n')
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f'the {self.label} worker stopped (exit status {self.process.wait()})')
        return json.loads(line)

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass(frozen=True)
class Compared:
    name: str
    spans: int
    baseline: tuple[float, ...]  # seconds per repetition; empty on a fixture only the current side has
    current: tuple[float, ...]
    same_calls: bool | None  # the two sides extract the same call names in the same order

    @property
    def ratio(self) -> float:
        return statistics.median(self.current) / statistics.median(self.baseline)

    @property
    def paired(self) -> list[float]:
        return sorted(c / b for b, c in zip(self.baseline, self.current, strict=True))


def compare(baseline_rev: str, current_rev: str, repeats: int) -> tuple[str, list[Compared], str]:
    """Time extraction on both sides, alternating; the worst fixture's profiles. Returns (title, rows, profiles)."""
    baseline, current = resolve(baseline_rev), resolve(current_rev)
    head = git('rev-parse', '--short', 'HEAD').decode().strip()
    title = f'baseline {baseline}, current {current or f"the working tree (HEAD {head})"}'
    common = baseline_fixtures(baseline)
    paths = sorted(FIXTURES.glob('*/*.otlp.jsonl'))
    names = [str(p.relative_to(FIXTURES)).removesuffix('.otlp.jsonl') for p in paths]
    shared = [i for i, p in enumerate(paths) if str(p.relative_to(FIXTURES)) in common]
    only_current = [i for i, p in enumerate(paths) if str(p.relative_to(FIXTURES)) not in common]
    replicas = []
    for path in paths:
        trace = case_trace(path)
        replicas.append(Replica.of(list(trace.tree), COPIES))
    sides: list[Side] = []
    with tempfile.TemporaryDirectory(prefix='ae-bench-') as tmp:
        try:
            plan = Path(tmp) / 'replicas.pickle'
            with plan.open('wb') as f:
                # Replica is __main__.Replica here: the workers get its fields
                pickle.dump([(r.trace_id, r.spans) for r in replicas], f, protocol=pickle.HIGHEST_PROTOCOL)
            roots = [package_copy(baseline, Path(tmp) / 'baseline'), package_copy(current, Path(tmp) / 'current')]
            sides = [Side('baseline', roots[0]), Side('current', roots[1])]
            loaded = [cast(dict[str, Any], side.ask(op='load', path=str(plan))) for side in sides]
            for side, answer, root in zip(sides, loaded, roots, strict=True):
                if Path(answer['package']) != (root / 'agentic_evals').resolve():
                    raise RuntimeError(f'the {side.label} worker imported {answer["package"]}, not {root}')
            times: dict[tuple[int, int], list[float]] = {}
            for repetition in range(-1, repeats):  # an untimed round first
                alone = only_current if repetition < min(repeats, ALONE_REPEATS) else []
                for turn, i in enumerate(shared + alone):
                    order = [0, 1] if (repetition + turn) % 2 == 0 else [1, 0]
                    for s in order if i in shared else [1]:
                        seconds = cast(float, sides[s].ask(op='time', index=i))
                        if repetition >= 0:
                            times.setdefault((s, i), []).append(seconds)
                print(f'  compared: repetition {repetition + 1} of {repeats}', file=sys.stderr)
            rows = [
                Compared(
                    names[i],
                    len(replicas[i].spans),
                    tuple(times.get((0, i), ())),
                    tuple(times[(1, i)]),
                    loaded[0]['routes'][i] == loaded[1]['routes'][i] if i in shared else None,
                )
                for i in shared + only_current
            ]
            worst = max((r for r in rows if r.baseline), key=lambda r: r.ratio)
            index = names.index(worst.name)
            profiles = '\n'.join(
                f'--- cProfile, {side.label} side, {worst.name} (one fresh tree) ---\n'
                + cast(str, side.ask(op='profile', index=index, top=15))
                for side in sides
            )
        finally:
            for side in sides:
                side.close()
    return title, rows, profiles


def comparison_table(rows: list[Compared], repeats: int) -> str:
    cells = []
    for row in rows:
        if not row.baseline:
            continue
        paired = row.paired
        cells.append(
            [
                row.name,
                f'{row.spans:,}',
                milliseconds(statistics.median(row.baseline)),
                milliseconds(statistics.median(row.current)),
                f'{row.ratio:.3f}',
                f'{paired[len(paired) // 4]:.3f}-{paired[-1 - len(paired) // 4]:.3f}',
                'yes' if row.same_calls else 'NO',
                'met' if row.ratio <= 1.10 else 'NOT MET',
            ]
        )
    shared = [r for r in rows if r.baseline]
    total_b = sum(statistics.median(r.baseline) for r in shared)
    total_c = sum(statistics.median(r.current) for r in shared)
    geometric = statistics.geometric_mean(r.ratio for r in shared)
    cells.append(
        [
            f'all {len(shared)} (sum of medians)',
            f'{sum(r.spans for r in shared):,}',
            milliseconds(total_b),
            milliseconds(total_c),
            f'{total_c / total_b:.3f}',
            f'geo. mean {geometric:.3f}',
            '',
            'met' if total_c / total_b <= 1.10 else 'NOT MET',
        ]
    )
    header = [
        f'fixture x{COPIES} ({repeats} runs a side)',
        'spans',
        'baseline ms',
        'current ms',
        'current/baseline',
        'paired ratios, middle half',
        'same calls',
        '<= 1.10',
    ]
    lines = [table(cells, header)]
    alone = [
        [
            r.name,
            f'{r.spans:,}',
            milliseconds(statistics.median(r.current)),
            f'{statistics.median(r.current) / r.spans * 1e6:.2f}',
        ]
        for r in rows
        if not r.baseline
    ]
    if alone:
        lines.append(f'\nFixtures the baseline does not have (current side only, {ALONE_REPEATS} runs, same run):\n')
        lines.append(table(alone, [f'fixture x{COPIES}', 'spans', 'current ms', 'µs/span']))
    return '\n'.join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.frameworks_bench', description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='3 repetitions per route: a smoke test')
    parser.add_argument(
        '--baseline',
        default=os.environ.get(BASELINE_ENV, DEFAULT_BASELINE),
        help=f'the commit compared with (${BASELINE_ENV}; default {DEFAULT_BASELINE}); none: no comparison',
    )
    parser.add_argument(
        '--current',
        default=os.environ.get(CURRENT_ENV, ''),
        help=f'the commit compared with the baseline (${CURRENT_ENV}; default: the working tree)',
    )
    parser.add_argument('--compare-only', action='store_true', help='the before/after comparison only, no route table')
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 9
    print(f'Extraction on framework traces x{COPIES}: median wall time per fresh SpanTree.')
    for line in machine():
        print(f'  {line}')
    started = time.perf_counter()
    if not args.compare_only:
        try:
            routes = [replicated(path) for path in sorted(FIXTURES.glob('*/*.otlp.jsonl'))]
            routes.append(reference())
            rows = []
            for route in routes:
                rows.append(measure(route, repeats))
                print(f'  measured: {route.name}', file=sys.stderr)
        except Mismatch as e:
            print(f'\nFAILED: {e}', file=sys.stderr)
            return 1
        print(f'\n{results_table(rows, repeats)}')
        print(
            '\nExtraction = extract_trajectory + tool_calls + model_requests. "vs trees": µs/span over the'
            " benchmarks.trees row. Suite: benchmarks.run's six evaluators without the requests metric (five:"
            ' no ArgumentCorrectness, whose arguments the built-ins do not find); built-ins only where they'
            ' read the route (the same calls and requests as ours on the single trace).'
        )
    if args.baseline.lower() != 'none':
        try:
            resolve(args.baseline)
        except subprocess.CalledProcessError:
            print(f'\nNo comparison: {args.baseline} is not a commit of this repository.', file=sys.stderr)
            return 0
        compared = 3 if args.quick else 9
        title, comparison, profiles = compare(args.baseline, args.current, compared)
        print(f'\nBefore and after, one run ({title}): extraction, median wall time per fresh SpanTree.')
        print(comparison_table(comparison, compared))
        print(
            '\nEach side is a worker process importing its own agentic_evals; both load the same pickled replicas'
            ' (made once here) and build a fresh SpanTree, untimed, before each timed extraction. Sides alternate'
            ' on every fixture in every repetition, after one untimed round. current/baseline: ratio of the'
            ' medians; paired ratios: current over baseline within each repetition. Same calls: the two sides'
            ' extract the same call names in the same order.'
        )
        print(f'\n{profiles}')
    print(f'Total benchmark time {time.perf_counter() - started:.0f} s.')
    return 0


if __name__ == '__main__':
    sys.exit(main())
