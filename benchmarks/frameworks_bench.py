"""Extraction on every framework fixture's trace, replicated to about 2,000 tool calls.

Usage (from the repository root): `python -m benchmarks.frameworks_bench [--quick]`, or
`make bench-frameworks`.

Each `fixtures/frameworks/*/*.otlp.jsonl` holds one trace of the same scenario (5 tool calls).
Its spans are copied 400 times under one new root, with fresh span ids and each copy shifted in
time after the previous one, so the tree holds the scenario 2,000 calls long. Every repetition
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
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Protocol

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


def replicated(path: Path) -> Route:
    """The route of one fixture, checked: 400 copies extract as 400 times the single trace."""
    (trace,) = ours.read_traces(path)
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.frameworks_bench', description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='3 repetitions per route: a smoke test')
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 9
    print(f'Extraction on framework traces x{COPIES}: median wall time per fresh SpanTree.')
    for line in machine():
        print(f'  {line}')
    started = time.perf_counter()
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
    print(f'Total benchmark time {time.perf_counter() - started:.0f} s.')
    return 0


if __name__ == '__main__':
    sys.exit(main())
