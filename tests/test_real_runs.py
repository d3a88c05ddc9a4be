"""Real pydantic-ai runs of the scripted scenario, for every instrumentation version this release accepts.

Each run is captured through a plain OpenTelemetry SDK provider in this process, and through Logfire
in a subprocess (Logfire configures the global provider, which a process can set only once).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_evals import evaluators as builtin
from scenario import SUPPORTED_VERSIONS, run_scenario

from agentic_evals import capture, extract_trajectory
from agentic_evals.trajectory.extract import _extract

from .factories import context
from .real_runs import (
    EXPECTED_REQUESTS,
    VALIDATION_SPANS,
    calls_of,
    evaluators_and_results,
    expected_calls,
    requests_of,
)

CASES = [(v, c) for v in SUPPORTED_VERSIONS for c in (True, False)]
IDS = [f'v{v}-{"content" if c else "no-content"}' for v, c in CASES]


@pytest.fixture(scope='module')
def trees() -> dict[tuple[int, bool], object]:
    provider = TracerProvider()
    out: dict[tuple[int, bool], object] = {}
    for version, content in CASES:
        with capture(provider) as captured:
            run_scenario(version=version, include_content=content, tracer_provider=provider)
        out[version, content] = captured.tree
    return out


@pytest.mark.parametrize(('version', 'content'), CASES, ids=IDS)
def test_trajectory(trees: dict[tuple[int, bool], object], version: int, content: bool) -> None:
    trajectory = extract_trajectory(trees[version, content])  # type: ignore[arg-type]
    assert calls_of(trajectory) == expected_calls(content)
    assert requests_of(trajectory) == EXPECTED_REQUESTS
    assert all(r.input_tokens > 0 and r.output_tokens > 0 for r in trajectory.model_requests)
    assert trajectory.agent_names == ['crasher', 'expert', 'main']
    # Before 2.27.1 a call whose arguments fail validation left no span: its response still lists it.
    unrun = [] if VALIDATION_SPANS else sorted(n for n in trajectory.notes if n.startswith("call 'compute' ("))
    assert len(unrun) == (0 if VALIDATION_SPANS else 2)
    assert all(n.endswith('was issued by a model response, but no tool span of it was read') for n in unrun)
    assert sorted(trajectory.notes) == unrun


@pytest.mark.parametrize(('version', 'content'), CASES, ids=IDS)
def test_evaluators(trees: dict[tuple[int, bool], object], version: int, content: bool) -> None:
    ctx = context(trees[version, content])  # type: ignore[arg-type]
    results = [(e, e.evaluate(ctx)) for e, _, _ in evaluators_and_results(content)]
    assert [(r.value, r.reason) for _, r in results] == [(v, why) for _, v, why in evaluators_and_results(content)]  # type: ignore[union-attr]


@pytest.mark.parametrize(('version', 'content'), CASES, ids=IDS)
def test_same_values_as_the_builtins(trees: dict[tuple[int, bool], object], version: int, content: bool) -> None:
    ctx = context(trees[version, content])  # type: ignore[arg-type]
    import agentic_evals as ours

    expected = ['search', 'fetch', 'compute', 'check_status', 'lookup']
    for failed in (False, True):
        pairs = [
            (builtin.ToolCorrectness(expected, include_failed=failed), ours.ToolCorrectness(expected, include_failed=failed)),
            (builtin.TrajectoryMatch(expected, include_failed=failed), ours.TrajectoryMatch(expected, include_failed=failed)),
            (builtin.TrajectoryMatch(expected, order='any_order', include_failed=failed), ours.TrajectoryMatch(expected, order='any_order', include_failed=failed)),
            (builtin.ArgumentCorrectness('compute', {'a': 2}, include_failed=failed), ours.ArgumentCorrectness('compute', {'a': 2}, include_failed=failed)),
            (builtin.ArgumentCorrectness('lookup', {'term': 'execute_tool'}, occurrence=1, include_failed=failed), ours.ArgumentCorrectness('lookup', {'term': 'execute_tool'}, occurrence=1, include_failed=failed)),
            (builtin.MaxToolCalls(13, include_failed=failed), ours.MaxToolCalls(13, include_failed=failed)),
            (builtin.MaxModelRequests(13), ours.MaxModelRequests(13)),
        ]  # fmt: skip
        for theirs, mine in pairs:
            assert mine.evaluate(ctx).value == theirs.evaluate(ctx).value, theirs


@pytest.mark.skipif(not VALIDATION_SPANS, reason='this pydantic-ai emits no span for a call that fails validation')
def test_the_one_deliberate_difference_is_the_order_of_a_failed_validation(
    trees: dict[tuple[int, bool], object],
) -> None:
    """The built-ins order by start time, so the call the model issued last comes first."""
    ctx = context(trees[5, True])  # type: ignore[arg-type]
    issued = ['search', 'fetch', 'compute']
    window = slice(6, 9)
    names = [c.name for c in extract_trajectory(ctx.span_tree).calls(include_failed=True)]
    assert names[window] == issued
    builtin_reason = builtin.TrajectoryMatch([], order='exact', include_failed=True).evaluate(ctx).reason or ''
    assert "'compute', 'search', 'fetch', 'ask_expert'" in builtin_reason


def test_extraction_happens_once_per_tree_however_many_evaluators(
    trees: dict[tuple[int, bool], object], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentic_evals.trajectory import extract

    count = 0

    def counting(tree: object) -> object:
        nonlocal count
        count += 1
        return _extract(tree)  # type: ignore[arg-type]

    monkeypatch.setattr(extract, '_extract', counting)
    tree = trees[SUPPORTED_VERSIONS[-1], True]
    fresh = type(tree)()  # a new tree object: nothing cached for it yet
    fresh.add_spans(list(tree))  # type: ignore[attr-defined]
    ctx = context(fresh)
    for evaluator, _, _ in evaluators_and_results(True) * 3:
        evaluator.evaluate(ctx)
    assert count == 1


LOGFIRE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {fixtures!r})
    sys.path.insert(0, {root!r})
    import logfire
    logfire.configure(send_to_logfire=False, console=False)
    from scenario import SUPPORTED_VERSIONS, run_scenario
    from agentic_evals import capture, extract_trajectory
    from tests.factories import context
    from tests.real_runs import calls_of, evaluators_and_results, requests_of

    out = []
    for version in SUPPORTED_VERSIONS:
        for content in (True, False):
            with capture() as captured:
                run_scenario(version=version, include_content=content)
            trajectory = extract_trajectory(captured.tree)
            ctx = context(captured.tree)
            results = [[r.value, r.reason] for r in (e.evaluate(ctx) for e, _, _ in evaluators_and_results(content))]
            out.append([version, content, calls_of(trajectory), requests_of(trajectory), results])
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_logfire_runs_extract_and_score_the_same() -> None:
    root = Path(__file__).resolve().parent.parent
    script = LOGFIRE_SCRIPT.format(fixtures=str(root / 'fixtures'), root=str(root))
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=300, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads(done.stdout.strip().splitlines()[-1])
    assert [(v, c) for v, c, *_ in runs] == CASES
    as_json = json.loads
    for version, content, calls, requests, results in runs:
        assert calls == as_json(json.dumps(expected_calls(content))), (version, content)
        assert requests == as_json(json.dumps(EXPECTED_REQUESTS)), (version, content)
        assert results == [[v, why] for _, v, why in evaluators_and_results(content)], (version, content)
