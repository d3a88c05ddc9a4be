"""Per-case gates and gates on run metrics: the verdict, the usage errors, and every view showing them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from agentic_evals.reports.document import (
    AssertionResult,
    CaseFailure,
    CaseResult,
    EvaluatorError,
    LabelResult,
    ReportDocument,
    ScoreResult,
)
from agentic_evals.reports.gates import Gates, MaxMetric, MinScore, UnknownResultError, format_duration, format_metric
from agentic_evals.reports.judge import check_gates
from agentic_evals.views.junit import render_junit
from agentic_evals.views.markdown import render_markdown
from agentic_evals.views.table import print_report


def _case(
    name: str, score: float | None = None, *, passed: bool = True, duration: float = 1.0, **metrics: float
) -> CaseResult:
    return CaseResult(
        name,
        scores={} if score is None else {'match': ScoreResult(score)},
        assertions={'budget': AssertionResult(passed)},
        labels={'risk': LabelResult('low')},
        metrics=dict(metrics),
        duration=duration,
    )


@pytest.fixture
def document() -> ReportDocument:
    return ReportDocument(
        name='nightly',
        cases=[
            _case('a', 0.9, requests=3, input_tokens=100, duration=2.0),
            _case('b', 0.5, passed=False, requests=8, input_tokens=300),
            _case('c', None, requests=4),
            _case('d', 0.7, requests=2, input_tokens=150),
            _case('e', 0.6, requests=1, input_tokens=50),
        ],
        failures=[CaseFailure('f', 'no trace found')],
    ).with_derived()


def _summary(document: ReportDocument, **gates: object) -> str:
    return check_gates(document, Gates(allow_failures=True, **gates)).summary  # type: ignore[arg-type]


def test_min_case_score_names_every_case_below_or_without_the_score(document: ReportDocument) -> None:
    # the mean passes, but three cases are below the threshold and one has no score at all
    assert _summary(document, min_scores=(MinScore('match', 0.6),)).endswith('match average 0.675 >= 0.600')
    assert _summary(document, min_case_scores=(MinScore('match', 0.65),)) == (
        "FAIL: match < 0.650 or missing on 4 of 6 cases ('b' 0.500, 'c' no value, 'e' 0.600, and 1 more)"
    )


def test_min_case_score_passes_when_every_case_has_it(document: ReportDocument) -> None:
    complete = ReportDocument(name='n', cases=[c for c in document.cases if c.scores]).with_derived()
    verdict = check_gates(complete, Gates(allow_failures=True, min_case_scores=(MinScore('match', 0.5),)))
    assert verdict.passed
    assert verdict.results[-1].detail == 'match >= 0.500 on all 4 cases (lowest 0.500)'
    failing = check_gates(complete, Gates(allow_failures=True, min_case_scores=(MinScore('match', 0.51),)))
    assert failing.summary == "FAIL: match < 0.510 on 1 of 4 cases ('b' 0.500)"


def test_min_case_score_on_an_assertion_counts_it_as_one_or_zero(document: ReportDocument) -> None:
    assert _summary(document, min_case_scores=(MinScore('budget', 1.0),)) == (
        "FAIL: budget < 1.000 or missing on 2 of 6 cases ('b' failed, 'f' not run)"
    )
    # a threshold of 0 passes any recorded assertion, but not a case that did not run
    assert _summary(document, min_case_scores=(MinScore('budget', 0.0),)) == (
        "FAIL: budget < 0.000 or missing on 1 of 6 cases ('f' not run)"
    )


def test_a_case_whose_evaluators_do_not_report_the_result_is_not_asked(document: ReportDocument) -> None:
    expected = {name: frozenset({'budget', 'match'}) for name in 'abdef'} | {'c': frozenset({'budget'})}
    gates = Gates(allow_failures=True, min_case_scores=(MinScore('match', 0.5),), expected=expected)
    verdict = check_gates(document, gates)
    # 'c' has no evaluator giving `match`; 'f' should have had one but did not run
    assert verdict.summary == "FAIL: match < 0.500 or missing on 1 of 5 cases ('f' not run)"


def test_an_evaluator_error_leaves_the_case_without_the_result() -> None:
    case = CaseResult('x', evaluator_errors=[EvaluatorError('match', 'RuntimeError: down')])
    document = ReportDocument(name='n', cases=[case, _case('y', 0.9)]).with_derived()
    gates = Gates(allow_failures=True, min_case_scores=(MinScore('match', 0.5),))
    assert check_gates(document, gates).summary == "FAIL: match < 0.500 or missing on 1 of 2 cases ('x' no value)"


def test_per_case_gates_on_unknown_names_are_usage_errors(document: ReportDocument) -> None:
    with pytest.raises(UnknownResultError, match="--min-case-score risk: 'risk' is a label"):
        check_gates(document, Gates(min_case_scores=(MinScore('risk', 0.5),)))
    with pytest.raises(UnknownResultError) as raised:
        check_gates(document, Gates(min_case_scores=(MinScore('mach', 0.5),)), known_names={'judge'})
    assert str(raised.value) == (
        "--min-case-score mach: no score or assertion is named 'mach' (available: budget, judge, match)"
    )
    # a name an evaluator reports but no case produced fails the gate on every case instead
    gates = Gates(allow_failures=True, min_case_scores=(MinScore('judge', 0.5),))
    summary = check_gates(document, gates, known_names={'judge'}).summary
    assert (
        summary
        == "FAIL: judge < 0.500 or missing on 6 of 6 cases ('a' no value, 'b' no value, 'c' no value, and 3 more)"
    )


def test_max_metric_gates_the_mean_over_the_cases_that_recorded_it(document: ReportDocument) -> None:
    assert _summary(document, max_metrics=(MaxMetric('requests', 3.5),)) == 'FAIL: requests average 3.6 > 3.5'
    passing = check_gates(document, Gates(allow_failures=True, max_metrics=(MaxMetric('input_tokens', 150),)))
    assert passing.results[-1].detail == 'input_tokens average 150 (4 of 5 cases recorded it) <= 150'
    assert passing.passed


def test_max_case_metric_names_the_cases_over_the_limit_or_without_it(document: ReportDocument) -> None:
    assert _summary(document, max_case_metrics=(MaxMetric('requests', 3),)) == (
        "FAIL: requests > 3 or missing on 3 of 6 cases ('b' 8, 'c' 4, 'f' not run)"
    )
    assert _summary(document, max_case_metrics=(MaxMetric('input_tokens', 1000),)) == (
        "FAIL: input_tokens > 1000 or missing on 2 of 6 cases ('c' not recorded, 'f' not run)"
    )
    ran = ReportDocument(name='n', cases=document.cases).with_derived()
    verdict = check_gates(ran, Gates(allow_failures=True, max_case_metrics=(MaxMetric('requests', 8),)))
    assert verdict.passed
    assert verdict.results[-1].detail == 'requests <= 8 on all 5 cases (highest 8)'


def test_duration_is_the_recorded_run_time(document: ReportDocument) -> None:
    assert _summary(document, max_metrics=(MaxMetric('duration', 1.1),)) == 'FAIL: duration average 1.2 s > 1.1 s'
    assert _summary(document, max_case_metrics=(MaxMetric('duration', 1.5),)) == (
        "FAIL: duration > 1.5 s or missing on 2 of 6 cases ('a' 2 s, 'f' not run)"
    )


def test_metric_names_are_checked(document: ReportDocument) -> None:
    with pytest.raises(UnknownResultError) as raised:
        check_gates(document, Gates(max_metrics=(MaxMetric('input_token', 5),)))
    assert str(raised.value) == (
        "--max-metric input_token: no metric is named 'input_token'"
        ' (available: cost, duration, input_tokens, output_tokens, requests, total_tokens)'
    )
    with pytest.raises(UnknownResultError, match='--max-case-metric match: no metric'):
        check_gates(document, Gates(max_case_metrics=(MaxMetric('match', 5),)))
    # a standard metric no case recorded (cost, when the spans carry none) fails the gate instead
    assert _summary(document, max_metrics=(MaxMetric('cost', 0.01),)) == (
        'FAIL: cost: no case recorded a value (maximum 0.01)'
    )


def test_a_later_gate_for_the_same_name_wins(document: ReportDocument) -> None:
    gates = (MaxMetric('requests', 1), MaxMetric('requests', 10))
    verdict = check_gates(document, Gates(allow_failures=True, max_case_metrics=gates))
    assert [r.gate for r in verdict.results][-1:] == ['max-case-metric requests']
    assert verdict.summary.startswith('FAIL: requests > 10 or missing on 1 of 6 cases')


def test_metric_numbers_are_shown_as_counts_costs_and_seconds() -> None:
    assert format_metric('input_tokens', 630) == '630'
    assert format_metric('input_tokens', 177.5) == '177.5'
    assert format_metric('cost', 0.0022050000000000004) == '0.002205'
    assert format_metric('cost', 0.0022051, 0.0022052) == '0.0022051'
    assert format_metric('duration', 0.25) == '250 ms'
    assert [format_duration(s) for s in (0.00085, 0.0123, 0.731, 0.008977, 1.25, 12.345, 1250.0)] == [
        '850 µs',
        '12.3 ms',
        '731 ms',
        '8.98 ms',
        '1.25 s',
        '12.3 s',
        '1250 s',
    ]
    # more digits only where two different durations would read the same
    assert (format_duration(1.2341, 1.2342), format_duration(1.2342, 1.2341)) == ('1.2341 s', '1.2342 s')
    assert (format_duration(0.0005004, 0.0005), format_duration(0.0005, 0.0005004)) == ('500.4 µs', '500 µs')


def test_junit_fails_the_testcases_a_per_case_gate_fails(document: ReportDocument) -> None:
    gates = Gates(
        allow_failures=True,
        min_case_scores=(MinScore('match', 0.65), MinScore('budget', 1.0)),
        max_case_metrics=(MaxMetric('requests', 3),),
    )
    verdict = check_gates(document, gates)
    root = ET.fromstring(render_junit(document, gates, verdict))
    results, gate_suite = root
    failed = {
        (c.get('classname'), c.get('name')): c[0].get('message') for c in results if len(c) and c[0].tag == 'failure'
    }
    assert failed == {
        # a failed assertion a per-case gate needs is a failure even with --allow-failures
        ('b', 'budget'): 'budget failed',
        ('b', 'match'): 'match = 0.500 < 0.650 (min-case-score)',
        ('e', 'match'): 'match = 0.600 < 0.650 (min-case-score)',
        ('c', 'match'): 'no match result (min-case-score)',
        ('b', 'requests'): 'requests = 8 > 3 (max-case-metric)',
        ('c', 'requests'): 'requests = 4 > 3 (max-case-metric)',
    }
    passing = [c for c in results if c.get('classname') == 'a' and c.get('name') == 'requests']
    assert [c[0].text for c in passing] == ['requests = 3 <= 3']
    assert [(c.get('name'), len(c.findall('failure'))) for c in gate_suite] == [
        ('assertions', 0),
        ('case failures', 0),
        ('min-case-score match', 1),
        ('min-case-score budget', 1),
        ('max-case-metric requests', 1),
    ]
    assert results.get('failures') == '6'


def test_junit_has_no_failure_when_the_per_case_gates_pass() -> None:
    document = ReportDocument(name='n', cases=[_case('a', 0.9, requests=2), _case('b', 0.8, requests=3)]).with_derived()
    gates = Gates(min_case_scores=(MinScore('match', 0.8),), max_case_metrics=(MaxMetric('requests', 3),))
    verdict = check_gates(document, gates)
    assert verdict.passed
    assert ET.fromstring(render_junit(document, gates, verdict)).get('failures') == '0'


def test_markdown_shows_the_gates_and_what_fails_them(document: ReportDocument) -> None:
    gates = Gates(
        allow_failures=True,
        min_case_scores=(MinScore('match', 0.65),),
        max_metrics=(MaxMetric('input_tokens', 100),),
        max_case_metrics=(MaxMetric('requests', 3),),
    )
    lines = render_markdown(document, gates, check_gates(document, gates)).splitlines()
    assert '| match | score | 0.675 | ❌ 2 case(s) < 0.650, 2 missing |' in lines
    assert '| input_tokens | metric | 150 | ❌ > 100 |' in lines
    assert '| requests | metric | 3.6 | ❌ 2 case(s) > 3, 1 missing |' in lines
    assert '| c | match | ❌ missing | no result (min-case-score) |' in lines
    assert '| b | requests | ❌ 8 > 3 | max-case-metric |' in lines
    assert '| e | match | ❌ 0.600 < 0.650 |  |' in lines


def test_markdown_shows_a_duration_gate_with_its_average(document: ReportDocument) -> None:
    gates = Gates(max_metrics=(MaxMetric('duration', 2),), max_case_metrics=(MaxMetric('duration', 3),))
    lines = render_markdown(document, gates, check_gates(document, gates)).splitlines()
    assert '| duration | metric | 1.2 s | ✅ <= 2 s; ❌ 1 missing |' in lines
    ran = ReportDocument(name='n', cases=document.cases).with_derived()
    lines = render_markdown(ran, gates, check_gates(ran, gates)).splitlines()
    assert '| duration | metric | 1.2 s | ✅ <= 2 s; ✅ each <= 3 s |' in lines


def test_the_terminal_table_shows_the_gates(document: ReportDocument) -> None:
    gates = Gates(
        allow_failures=True,
        min_case_scores=(MinScore('match', 0.65),),
        max_metrics=(MaxMetric('duration', 1),),
        max_case_metrics=(MaxMetric('requests', 3),),
    )
    console = Console(width=160, record=True, color_system=None)
    print_report(document, gates, check_gates(document, gates), console)
    lines = [line.rstrip() for line in console.export_text().splitlines()]
    assert '  b      budget     FAIL' in lines
    assert any(line.split() == ['match', 'missing', 'no', 'result', '(--min-case-score)'] for line in lines)
    assert any(line.split() == ['match', '0.500', '<', '0.650'] for line in lines)
    assert any(line.split() == ['requests', '8', '>', '3'] for line in lines)
    assert any(
        line.split() == ['match', 'score', '0.675', 'FAIL:', '2', 'case(s)', '<', '0.650,', '2', 'missing']
        for line in lines
    )
    assert any(line.split() == ['duration', 'metric', '1.2', 's', 'FAIL:', '>', '1', 's'] for line in lines)
    assert any(
        line.split() == ['requests', 'metric', '3.6', 'FAIL:', '2', 'case(s)', '>', '3,', '1', 'missing']
        for line in lines
    )


def test_a_score_equal_to_its_threshold_reaches_it_despite_float_rounding() -> None:
    """F1 of 3 matches in 3 expected and 5 actual calls is 3/4, computed (as the built-ins do) as 0.7499999999999999."""
    from pydantic_evals.otel import SpanTree

    from agentic_evals import TrajectoryMatch, evaluator_context, trajectory_match

    result = trajectory_match(['a', 'b', 'c', 'x', 'y'], ['a', 'b', 'c'])
    assert result.value < 0.75  # the built-ins' arithmetic, kept so the values stay equal to theirs
    document = ReportDocument(name='n', cases=[_case('a', result.value, requests=2.0000000000000004)]).with_derived()
    assert check_gates(document, Gates(min_scores=(MinScore('match', 0.75),))).passed
    assert check_gates(document, Gates(min_case_scores=(MinScore('match', 0.75),))).passed
    assert check_gates(document, Gates(max_metrics=(MaxMetric('requests', 2),))).passed
    assert check_gates(document, Gates(max_case_metrics=(MaxMetric('requests', 2),))).passed
    assert not check_gates(document, Gates(min_case_scores=(MinScore('match', 0.7501),))).passed

    calls = [{'id': n, 'type': 'function', 'function': {'name': n, 'arguments': '{}'}} for n in 'abcxy']
    messages = [
        {'role': 'assistant', 'tool_calls': calls},
        *({'role': 'tool', 'tool_call_id': n, 'content': ''} for n in 'abcxy'),
    ]
    ctx = evaluator_context(SpanTree(), output=messages)
    judged = TrajectoryMatch(['a', 'b', 'c'], threshold=0.75, conversation='output').evaluate(ctx)
    assert isinstance(judged, dict)
    assert judged['TrajectoryMatch_pass'].value is True
