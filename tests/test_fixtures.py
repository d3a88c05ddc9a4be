"""The bundled fixtures: real runs saved in every format load back to the trajectory of a live run.

`fixtures/generate.py` writes them with the latest pydantic-ai, so the expectations are those of a
release with validation-failure spans and retry causes, whatever release runs this test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_evals import extract_trajectory, read_traces

from .real_runs import EXPECTED_REQUESTS, calls_of, expected_calls, requests_of

FIXTURES = Path(__file__).resolve().parent.parent / 'fixtures'
SCENARIO_FILES = sorted((FIXTURES / 'scenario').glob('v*'))


def test_every_version_and_format_is_bundled() -> None:
    names = {p.name for p in SCENARIO_FILES}
    for version in (2, 3, 4, 5, 6):
        for suffix in ('.otlp.jsonl', '.otlp.json', '.otlp.pb', '.jaeger.json'):
            assert f'v{version}{suffix}' in names
    for suffix in ('.otlp.jsonl.gz', '.otlp.json.gz', '.otlp.pb.gz', '.jaeger.json.gz'):
        assert f'v5{suffix}' in names


@pytest.mark.parametrize('path', SCENARIO_FILES, ids=lambda p: p.name)
def test_scenario_fixture_extracts_like_a_live_run(path: Path) -> None:
    [trace] = read_traces(path)
    assert trace.warnings == ()
    trajectory = extract_trajectory(trace.tree)
    content = 'no-content' not in path.name
    assert calls_of(trajectory) == expected_calls(content, validation_spans=True, retry_cause=True)
    assert requests_of(trajectory) == EXPECTED_REQUESTS


def test_support_fixtures_hold_one_trace_per_case() -> None:
    for variant in ('baseline', 'regressed'):
        traces = read_traces(FIXTURES / 'support' / f'{variant}.otlp.jsonl')
        assert [t.tree.roots[0].attributes['case_name'] for t in traces] == [
            'refund',
            'order_status',
            'shipping_faq',
            'damaged_escalation',
        ]


SUPPORT_FILES = sorted((FIXTURES / 'support').glob('*.*.*'))


@pytest.mark.parametrize('path', SUPPORT_FILES, ids=lambda p: p.name)
def test_support_fixtures_score_the_same_in_every_format(path: Path) -> None:
    from pydantic_evals import Dataset

    from agentic_evals import evaluate_traces_sync, evaluator_types

    dataset = Dataset[object, object, object].from_file(
        FIXTURES / 'support' / 'dataset.yaml', custom_evaluator_types=evaluator_types()
    )
    report = evaluate_traces_sync(read_traces(path), dataset=dataset)
    failed = sorted(
        f'{case.name}:{name}' for case in report.cases for name, result in case.assertions.items() if not result.value
    )
    if path.name.startswith('baseline'):
        assert failed == []
    else:
        assert failed == [
            'damaged_escalation:ArgumentCorrectness',
            'refund:ArgumentCorrectness',
            'shipping_faq:ToolCorrectness',
        ]
    assert report.failures == []


def test_the_framework_fixtures_load_as_one_trace_per_file_with_no_warning() -> None:
    """Each file's trace ids are its own (`fixtures/frameworks/regenerate.py`), and the folder's project
    files (generators, pins, package manifests) are not traces: the first folder a new user points
    the tool at loads cleanly. A file holds one run, beside which AutoGen writes each agent object's
    `create_agent` side trace, and the LangGraph.js route that does not propagate its context holds
    the sub-agent's run in a second trace."""
    from agentic_evals import load_traces
    from agentic_evals.offline.matching import is_side_trace

    folder = Path(__file__).resolve().parent.parent / 'fixtures' / 'frameworks'
    warnings: list[str] = []
    runs: dict[Path, int] = {}
    for trace in load_traces(folder, on_warning=warnings.append):
        assert len(trace.sources) == 1 and not trace.warnings, (trace.trace_id, trace.sources, trace.warnings)
        if not is_side_trace(trace):
            runs[trace.sources[0]] = runs.get(trace.sources[0], 0) + 1
    assert warnings == []
    files = sorted(folder.glob('*/*.otlp.jsonl'))
    assert sorted(runs) == files
    assert {path.relative_to(folder).as_posix() for path, n in runs.items() if n > 1} == {
        'langgraph_js/openinference-unpropagated.sdk.otlp.jsonl',
        'langgraph_js/openinference-unpropagated.collector.otlp.jsonl',
    }
