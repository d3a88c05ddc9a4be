"""Time agentic_evals' evaluators against pydantic-evals' built-ins of the same names, side by side.

Usage (from the repository root): `python -m benchmarks.run [--quick]`, or `make bench`.

Both sides score the same freshly built span tree in every repetition. Ours cache the extracted
trajectory per tree object, so reusing one tree across repetitions would time a cache hit; a fresh
tree per repetition makes every repetition pay for extraction, as a real case does. Building the
tree is outside the timed region. Every pair of results must have the same value (bool or float):
the run stops with exit status 1 at the first disagreement. Missing a speed target is reported in
the table but does not change the exit status.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pydantic_evals.evaluators as builtin
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext
from pydantic_evals.otel.span_tree import SpanTree

import agentic_evals as ours

from . import workload
from .trees import AgentRunPlan, RecordedRun, perturb, plan_run

AnyEvaluator = Evaluator[object, object, object]
Context = EvaluatorContext[object, object, object]

SEED = 20250601
COMBINED_TOOL_SPANS = 2_000
COMBINED_TARGET = 4.0
SINGLE_TARGET = 1.0
"""No evaluator alone may be slower than its built-in."""
METRIC_CALLS = 2_000
"""Calls per timed repetition of `MaxModelRequests` reading the metric (see `Case.calls`)."""
IN_ORDER_SIZES = (100, 1_000, 3_000)
IN_ORDER_TARGET_SIZE = 3_000
IN_ORDER_TARGET = 50.0
SMALL_TARGET = 2.0
SMALL_SPANS = 21
SMALL_RUNS = 8
"""Workload runs recorded for the small-tree case (the first with `SMALL_SPANS` spans is scored)."""
SMALL_TREES = 50
"""Fresh trees per timed repetition of the small-tree case (see `Case.trees`)."""


class Mismatch(Exception):
    """A built-in and ours returned different values for the same evaluator on the same tree."""


@dataclass(frozen=True)
class Pair:
    """The same evaluator, configured the same way, from each side."""

    label: str
    builtin: AnyEvaluator
    ours: AnyEvaluator


def pair(
    label: str, builtin_cls: Callable[..., AnyEvaluator], ours_cls: Callable[..., AnyEvaluator], **options: Any
) -> Pair:
    return Pair(label, builtin_cls(**options), ours_cls(**options))


@dataclass(frozen=True)
class Case:
    """One row of the table: a planned run and the evaluators both sides run on each fresh tree of it."""

    name: str
    plan: AgentRunPlan | RecordedRun
    pairs: tuple[Pair, ...]
    repeats: int
    target: float | None = None
    """Minimum built-in/ours time ratio this case should reach; `None` for rows shown for context."""
    with_requests: bool = True
    """Whether `ctx.metrics` holds `requests` (without it both `MaxModelRequests` count spans)."""
    calls: int = 1
    """How many times each side calls its evaluators per timed repetition (times are per call).

    More than one only where a call takes about a microsecond and does no per-tree work that a
    second call could reuse (`MaxModelRequests` reading the metric): one such call, timed cold, is
    mostly the timer and the CPU caches."""
    trees: int = 1
    """How many fresh trees each side scores per timed repetition (times are per tree).

    More than one for small trees, where one tree takes a fraction of a millisecond: every tree
    is still new, so each pays for its own extraction."""
    as_built: bool = False
    """Each side builds its own trees and scores each right after building it, as `run` and
    `Dataset.evaluate` do (times are the evaluators' alone); otherwise both sides score the same
    trees, all built before a `gc.collect()`, so the first to read a tree fetches it from memory."""

    @property
    def metrics(self) -> dict[str, int | float]:
        metrics = self.plan.metrics
        return metrics if self.with_requests else {k: v for k, v in metrics.items() if k != 'requests'}


@dataclass
class Measurement:
    case: Case
    builtin_seconds: list[float] = field(default_factory=list)
    ours_seconds: list[float] = field(default_factory=list)
    values: list[bool | float] = field(default_factory=list)
    """The values both sides agreed on, from the last repetition."""

    @property
    def builtin_median(self) -> float:
        return statistics.median(self.builtin_seconds)

    @property
    def ours_median(self) -> float:
        return statistics.median(self.ours_seconds)

    @property
    def ratio(self) -> float:
        """The median over repetitions of built-in/ours, each measured back to back on one tree.

        A shared machine changes speed between repetitions more than within one, so each
        repetition's own ratio is steadier than the ratio of the two medians.
        """
        return statistics.median(b / o for b, o in zip(self.builtin_seconds, self.ours_seconds, strict=True))

    @property
    def met(self) -> bool | None:
        return None if self.case.target is None else self.ratio >= self.case.target


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


def make_context(tree: SpanTree, metrics: dict[str, int | float]) -> Context:
    """The context pydantic-evals would pass an evaluator for a case whose task produced `tree`."""
    return EvaluatorContext(
        name='benchmark',
        inputs=None,
        metadata=None,
        expected_output=None,
        output=None,
        duration=0.0,
        _span_tree=tree,
        attributes={},
        metrics=dict(metrics),
    )


@contextmanager
def collector_off() -> Iterator[None]:
    """The garbage collector off inside a timed region (as `timeit` does), after a collection just
    before it, so neither side pays for the other's garbage."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def run_side(evaluators: Sequence[AnyEvaluator], ctx: Context, calls: int = 1) -> tuple[float, list[object]]:
    """Seconds taken by all `evaluators` on `ctx` (per call, of `calls`), and what they returned."""
    with collector_off():
        start = time.perf_counter()
        for _ in range(calls):
            results: list[object] = [evaluator.evaluate(ctx) for evaluator in evaluators]
        elapsed = (time.perf_counter() - start) / calls
    return elapsed, results


def run_side_on_trees(evaluators: Sequence[AnyEvaluator], contexts: Sequence[Context]) -> tuple[float, list[object]]:
    """`run_side` over several fresh trees' contexts: seconds per tree, and every result (tree by
    tree, the evaluators' results in order)."""
    with collector_off():
        start = time.perf_counter()
        results: list[object] = [evaluator.evaluate(ctx) for ctx in contexts for evaluator in evaluators]
        elapsed = (time.perf_counter() - start) / len(contexts)
    return elapsed, results


def run_side_as_built(
    evaluators: Sequence[AnyEvaluator], plan: AgentRunPlan | RecordedRun, metrics: dict[str, int | float], trees: int
) -> tuple[float, list[object]]:
    """Seconds per tree of `evaluators` on `trees` new trees, each timed right after it is built
    (building is not timed), and every result."""
    elapsed = 0.0
    results: list[object] = []
    with collector_off():
        for _ in range(trees):
            ctx = make_context(plan.build_tree(), metrics)
            start = time.perf_counter()
            found = [evaluator.evaluate(ctx) for evaluator in evaluators]
            elapsed += time.perf_counter() - start
            results += found
    return elapsed / trees, results


Side = Callable[[Sequence[AnyEvaluator]], tuple[float, list[object]]]
"""Times one side's evaluators in a repetition: seconds (per tree or call) and results."""


def sides(case: Case, metrics: dict[str, int | float]) -> Side:
    """How each side is timed in one repetition of `case`: on trees built now and shared by both
    sides, or (`case.as_built`) on trees of its own."""
    if case.as_built:
        return lambda evaluators: run_side_as_built(evaluators, case.plan, metrics, case.trees)
    if case.trees > 1:
        trees = [case.plan.build_tree() for _ in range(case.trees)]
        return lambda evaluators: run_side_on_trees(evaluators, [make_context(tree, metrics) for tree in trees])
    tree = case.plan.build_tree()
    return lambda evaluators: run_side(evaluators, make_context(tree, metrics), case.calls)


def shorten(text: str | None, limit: int = 300) -> str:
    text = str(text)
    return text if len(text) <= limit else f'{text[:limit]}... ({len(text):,} characters)'


def agreed_values(case: Case, builtin_results: list[object], ours_results: list[object]) -> list[bool | float]:
    values: list[bool | float] = []
    labelled = zip(case.pairs * (len(builtin_results) // len(case.pairs)), builtin_results, ours_results, strict=True)
    for item, theirs, mine in labelled:
        where = f'{case.name}, {item.label}'
        if not isinstance(theirs, EvaluationReason) or not isinstance(mine, EvaluationReason):
            raise Mismatch(f'{where}: expected EvaluationReason from both sides, got {theirs!r} and {mine!r}')
        a, b = theirs.value, mine.value
        if not isinstance(a, (bool, float)) or type(a) is not type(b) or a != b:
            raise Mismatch(
                f'{where}: built-in returned {a!r} ({type(a).__name__}), ours {b!r} ({type(b).__name__})\n'
                f'  built-in reason: {shorten(theirs.reason)}\n  ours reason: {shorten(mine.reason)}'
            )
        values.append(a)
    return values[-len(case.pairs) :]


def measure(case: Case) -> Measurement:
    """One untimed warm-up, then `case.repeats` timed repetitions, each on new trees (`case.trees`).

    Which side goes first alternates between repetitions, so neither always finds the tree's spans
    in the CPU caches.
    """
    result = Measurement(case)
    builtin_evaluators = [p.builtin for p in case.pairs]
    ours_evaluators = [p.ours for p in case.pairs]
    metrics = case.metrics
    for repetition in range(-1, case.repeats):
        side = sides(case, metrics)
        if repetition % 2 == 0:
            builtin_time, builtin_results = side(builtin_evaluators)
            ours_time, ours_results = side(ours_evaluators)
        else:
            ours_time, ours_results = side(ours_evaluators)
            builtin_time, builtin_results = side(builtin_evaluators)
        del side  # and the trees it holds
        result.values = agreed_values(case, builtin_results, ours_results)
        if repetition >= 0:
            result.builtin_seconds.append(builtin_time)
            result.ours_seconds.append(ours_time)
    return result


def measure_ours_split(
    plan: AgentRunPlan | RecordedRun, evaluators: Sequence[AnyEvaluator], repeats: int
) -> tuple[float, float]:
    """Median seconds of our extraction on a fresh tree, and of the evaluators once it is cached.

    Extraction is lazy (a trajectory reads spans when asked), so "extraction" here is what a
    trajectory evaluator makes it do: walk the tree and put the calls in issue order (the names).
    """
    extraction: list[float] = []
    scoring: list[float] = []
    for _ in range(repeats):
        tree = plan.build_tree()
        with collector_off():
            start = time.perf_counter()
            ours.extract_trajectory(tree).call_names()
            extraction.append(time.perf_counter() - start)
        scoring.append(run_side(evaluators, make_context(tree, plan.metrics))[0])
        del tree
    return statistics.median(extraction), statistics.median(scoring)


# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------


def combined_pairs(plan: AgentRunPlan) -> tuple[Pair, ...]:
    """The six evaluators (TrajectoryMatch twice) as a case might configure them for this run."""
    last_sql = next(c for c in reversed(plan.calls) if c.name == 'run_sql' and c.outcome == 'ok')
    return suite_pairs(plan.trajectory, 'run_sql', dict(last_sql.arguments))


def suite_pairs(trajectory: list[str], argument_tool: str, arguments: dict[str, Any]) -> tuple[Pair, ...]:
    """The six evaluators for a run whose scored calls are `trajectory`, checking the arguments of
    the last `argument_tool` call (shared with `benchmarks.frameworks_bench`)."""
    return (
        pair(
            'TrajectoryMatch exact',
            builtin.TrajectoryMatch,
            ours.TrajectoryMatch,
            expected_trajectory=trajectory,
            order='exact',
        ),
        pair(
            'TrajectoryMatch any_order',
            builtin.TrajectoryMatch,
            ours.TrajectoryMatch,
            expected_trajectory=perturb(trajectory, rate=0.05, seed=SEED + 1),
            order='any_order',
        ),
        pair('ToolCorrectness', builtin.ToolCorrectness, ours.ToolCorrectness, expected_tools=sorted(trajectory)),
        pair(
            'ArgumentCorrectness',
            builtin.ArgumentCorrectness,
            ours.ArgumentCorrectness,
            tool_name=argument_tool,
            expected_arguments=arguments,
            occurrence='last',
        ),
        pair('MaxToolCalls', builtin.MaxToolCalls, ours.MaxToolCalls, max_calls=2_500),
        pair('MaxModelRequests', builtin.MaxModelRequests, ours.MaxModelRequests, max_requests=1_000),
    )


SHAPES: tuple[tuple[str, dict[str, Any]], ...] = (
    ('pydantic-ai', {}),
    ('one chat per call, tools after it', {'calls_per_response': 1}),
    ('one chat per call, tools under it', {'calls_per_response': 1, 'layout': 'children'}),
)
"""The tree shapes every evaluator is measured on: pydantic-ai's (one to five calls per response,
tool spans beside their chat span), then one chat span per call with the tool span after it or
inside it (frameworks that parent tool spans to the model request)."""


def shape_cases(shape: str, plan: AgentRunPlan, repeats: Callable[[int], int]) -> list[Case]:
    """The six evaluators together and each alone, with and without `ctx.metrics['requests']`.

    Only `MaxModelRequests` reads the metric, so it alone is measured both ways; without it both
    sides count model-request spans themselves.
    """
    pairs = combined_pairs(plan)
    cases = [
        Case(f'{shape}: all six together', plan, pairs, repeats(21), COMBINED_TARGET),
        Case(f'{shape}: all six, no requests metric', plan, pairs, repeats(21), COMBINED_TARGET, with_requests=False),
    ]
    cases += [Case(f'{shape}: {p.label} alone', plan, (p,), repeats(15), SINGLE_TARGET) for p in pairs[:-1]]
    # Reading ctx.metrics['requests'] takes about a microsecond on both sides: timed over many calls.
    name = f'{shape}: {pairs[-1].label} alone'
    cases.append(Case(name, plan, pairs[-1:], repeats(21), SINGLE_TARGET, calls=METRIC_CALLS))
    name = f'{shape}: {pairs[-1].label} alone, no requests metric'
    cases.append(Case(name, plan, pairs[-1:], repeats(15), SINGLE_TARGET, with_requests=False))
    return cases


def small_tree_run() -> RecordedRun:
    """A real run of `benchmarks.workload`'s support agent (and its billing sub-agent): the first of
    `SMALL_RUNS` planned runs whose trace has `SMALL_SPANS` spans, recorded through pydantic-ai and
    read back with `load_traces`, as `agentic-evals-otel run` reads the workload."""
    from agentic_evals.traces import load_traces
    from agentic_evals.trajectory.run_metrics import span_tree_metrics

    rng = random.Random(workload.SEED)
    plans = [workload.plan_run(rng, index) for index in range(SMALL_RUNS)]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / workload.TRACES_FILE
        workload.real_runs(plans, path)
        for trace in load_traces(path):
            if len(trace.tree.nodes_by_id) == SMALL_SPANS:
                return RecordedRun.from_tree(trace.tree, span_tree_metrics(trace.tree))
    raise SystemExit(f'none of {SMALL_RUNS} workload runs has {SMALL_SPANS} spans')


def small_tree_pairs(run: RecordedRun) -> tuple[Pair, ...]:
    """The six evaluators for the recorded run: its scored calls (all agents') as the trajectory,
    the last order lookup's arguments, budgets a little above the run's calls and requests (the
    workload dataset's)."""
    trajectory = ours.extract_trajectory(run.build_tree())
    lookup = trajectory.calls(name='lookup_order')[-1]
    pairs = suite_pairs(trajectory.call_names(), 'lookup_order', dict(lookup.arguments or {}))
    budgets = (
        pair('MaxToolCalls', builtin.MaxToolCalls, ours.MaxToolCalls, max_calls=12),
        pair('MaxModelRequests', builtin.MaxModelRequests, ours.MaxModelRequests, max_requests=12),
    )
    return (*pairs[:-2], *budgets)


def small_tree_case(run: RecordedRun, repeats: int) -> Case:
    name = f'small trees ({SMALL_SPANS} spans, workload run): all six together'
    return Case(name, run, small_tree_pairs(run), repeats, SMALL_TARGET, trees=SMALL_TREES)


def small_tree_as_built_case(run: RecordedRun, repeats: int) -> Case:
    """The small-tree suite on trees scored as they are built: for context, no target (see `Case.as_built`)."""
    name = f'small trees ({SMALL_SPANS} spans), each scored as it is built'
    return Case(name, run, small_tree_pairs(run), repeats, None, trees=SMALL_TREES, as_built=True)


def in_order_case(size: int, repeats: int) -> Case:
    plan = plan_run(ok_calls=size, seed=SEED + size)
    expected = perturb(plan.trajectory, rate=0.05, seed=SEED + size + 1)
    evaluator = pair(
        'TrajectoryMatch in_order', builtin.TrajectoryMatch, ours.TrajectoryMatch, expected_trajectory=expected
    )
    target = IN_ORDER_TARGET if size == IN_ORDER_TARGET_SIZE else None
    return Case(f'in_order, {size:,}-step trajectories', plan, (evaluator,), repeats, target)


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def host() -> list[str]:
    """The CPU with the load before the run, and the Python: the lines every benchmark starts with."""
    cpu = platform.processor() or 'unknown'
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as f:
            cpu = next((line.split(':', 1)[1].strip() for line in f if line.startswith('model name')), cpu)
    except OSError:
        pass
    load = ', '.join(f'{x:.2f}' for x in os.getloadavg())
    return [
        f'CPU: {cpu}, {os.cpu_count()} logical cores; load average before the run: {load}',
        f'Python {platform.python_version()} ({platform.python_implementation()}), {platform.system()}',
    ]


def machine() -> list[str]:
    return [*host(), f'pydantic-evals {version("pydantic-evals")}, agentic-evals-otel {version("agentic-evals-otel")}']


def milliseconds(seconds: float) -> str:
    """Two decimals, or three significant digits below 0.1 ms (the metric path takes microseconds)."""
    return f'{seconds * 1000:,.2f}' if seconds >= 1e-4 else f'{seconds * 1000:.3g}'


def ratio(value: float) -> str:
    """Two decimals below 2x, where a target of 1x is decided; one above."""
    return f'{value:.2f}x' if value < 2 else f'{value:,.1f}x'


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return (
            '| '
            + ' | '.join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
            + ' |'
        )

    rule = '|' + '|'.join('-' * (w + 1) + ':' if i else '-' * (w + 2) for i, w in enumerate(widths)) + '|'
    return '\n'.join([line(header), rule, *(line(row) for row in rows)])


def results_table(measurements: list[Measurement]) -> str:
    rows: list[list[str]] = []
    for m in measurements:
        target = '-' if m.case.target is None else f'>= {m.case.target:g}x'
        status = '' if m.met is None else 'met' if m.met else 'NOT MET'
        rows.append(
            [
                m.case.name,
                str(m.case.repeats),
                milliseconds(m.builtin_median),
                milliseconds(m.ours_median),
                ratio(m.ratio),
                f'{target} {status}'.strip(),
            ]
        )
    return table(rows, ['case', 'runs', 'built-in ms', 'ours ms', 'built-in/ours (median)', 'target'])


def values_line(m: Measurement) -> str:
    shown = ', '.join(
        f'{p.label}={v!r}' if isinstance(v, bool) else f'{p.label}={v:.4f}'
        for p, v in zip(m.case.pairs, m.values, strict=True)
    )
    return f'{m.case.name}: {shown}'


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.run', description=__doc__.splitlines()[0])
    parser.add_argument(
        '--quick', action='store_true', help='a few repetitions per case: a smoke test, not a measurement'
    )
    args = parser.parse_args(argv)
    scale = 0.25 if args.quick else 1.0

    def repeats(n: int) -> int:
        return max(1, round(n * scale))

    print('agentic_evals vs pydantic-evals built-ins: median wall time per run; each run scores a fresh SpanTree.')
    for line in machine():
        print(f'  {line}')
    if os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1):
        print('  Note: other processes are busy on this machine; expect noisy times (ratios are steadier).')
    started = time.perf_counter()

    shapes = [(shape, plan_run(tool_spans=COMBINED_TOOL_SPANS, seed=SEED, **options)) for shape, options in SHAPES]
    cases: list[Case] = []
    for shape, plan in shapes:
        print(
            f'\n{shape}: {len(plan.calls):,} tool spans ({len(plan.trajectory):,} successful), '
            f'{plan.model_requests:,} chat spans, {len(plan.spans):,} spans in all.'
        )
        cases += shape_cases(shape, plan, repeats)
    small = small_tree_run()
    print(
        f'\nsmall trees: a recorded workload run of {len(small.spans)} spans'
        f' ({len(ours.extract_trajectory(small.build_tree()).call_names())} successful tool calls),'
        f' {SMALL_TREES} fresh trees per run.'
    )
    cases += [small_tree_case(small, repeats(21)), small_tree_as_built_case(small, repeats(21))]
    cases += [in_order_case(size, repeats(n)) for size, n in zip(IN_ORDER_SIZES, (21, 9, 5), strict=True)]

    measurements: list[Measurement] = []
    try:
        for case in cases:
            measurements.append(measure(case))
            print(f'  measured: {case.name}', file=sys.stderr)
    except Mismatch as e:
        print(f'\nFAILED: results differ between the built-in and ours.\n{e}', file=sys.stderr)
        return 1

    print(f'\n{results_table(measurements)}')
    print('\nValues (identical on both sides in every run):')
    for m in measurements:
        if len(m.case.pairs) > 1 or m.case.name.startswith('in_order'):
            print(f'  {values_line(m)}')

    print(
        '\nWhere our time goes (medians): extraction on a fresh tree (walk, issue order, names);'
        ' the six evaluators once it is cached.'
    )
    for shape, plan in shapes:
        extraction, scoring = measure_ours_split(plan, [p.ours for p in combined_pairs(plan)], repeats(9))
        print(f'  {shape}: {milliseconds(extraction)} ms; {milliseconds(scoring)} ms')
    extraction, scoring = measure_ours_split(small, [p.ours for p in small_tree_pairs(small)], repeats(51))
    print(f'  small trees: {milliseconds(extraction)} ms; {milliseconds(scoring)} ms')

    missed = [m.case.name for m in measurements if m.met is False]
    print(f'\nTargets: {"all met" if not missed else "NOT MET: " + "; ".join(missed)}.')
    print(f'Total benchmark time {time.perf_counter() - started:.0f} s.')
    return 0


if __name__ == '__main__':
    sys.exit(main())
