"""The comparison of two reports as one self-contained HTML page (`compare --html`).

The page is the shared shell (`html_page.render_page`) with a JSON payload built here and drawn by
`html_assets/compare.js`: the verdict, every average with its delta (regressions first), every case
with its results in both runs (cases with a worse result first, then other changes, then the rest),
and, for each case that changed, both runs' tool calls and alignments side by side. The script
builds the case list a page at a time and a case's details only when it is opened, so a report of
10,000 cases stays usable; only changed cases carry their trajectories, which keeps the file small.

Everything that reaches the page from data passes through `visible` here, then reaches the DOM
through `textContent` only; changed and worse come from the `Comparison`, so the page agrees with
the terminal and Markdown views.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..reports.compare import AverageChange, CaseChange, Comparison, signed
from ..reports.document import Alignment, CaseFailure, CaseResult, ReportDocument, Timeline
from ..reports.gates import format_metric, format_number
from .html import payload_text, tokens_recorded
from .html_page import asset, render_page
from .text import one_line

if TYPE_CHECKING:
    from ..trajectory.account import TraceAccount

VIEW = 'agentic-evals/comparison'
"""The payload's `view`: what the page's script checks before drawing it."""
CASE = '(case)'
"""The result name of a change to the case as a whole (added, removed, no longer run)."""

_BODY = '<div id="app" class="ae-compare"><p class="ae-loading">Loading the comparison…</p></div>'


def render_comparison_html(comparison: Comparison, *, compress: bool | None = None) -> str:
    """The whole HTML page of `comparison` (no network, opened from disk)."""
    return render_page(
        _title(comparison),
        _payload_text(comparison),
        css=[asset('compare.css')],
        js=[asset('compare.js')],
        body=_BODY,
        compress=compress,
    )


def _title(comparison: Comparison) -> str:
    b, c = comparison.baseline, comparison.candidate
    verdict = 'no regression' if comparison.passed else 'regression'
    return one_line(f'agentic-evals compare: {b.name} -> {c.name} ({verdict})')


def comparison_payload(comparison: Comparison) -> dict[str, Any]:
    """What the page draws, as plain JSON data, every string from data already made `visible`."""
    payload: dict[str, Any] = json.loads(_payload_text(comparison))
    return payload


def _payload_text(comparison: Comparison) -> str:
    """The payload as JSON text, every string (keys too) through `visible`: the report page's one pass."""
    return payload_text(_raw_payload(comparison))


def _raw_payload(comparison: Comparison) -> dict[str, Any]:
    baseline, candidate = comparison.baseline, comparison.candidate
    evaluators = _evaluator_names(baseline, candidate)
    gated = [a for a in comparison.averages if a.kind != 'metric']
    payload: dict[str, Any] = {
        'view': VIEW,
        'verdict': {
            'passed': comparison.passed,
            'summary': comparison.summary,
            'tolerance': format_number(comparison.tolerance),
            'regressions': len(comparison.regressions),
            'improved': sum(a.improved for a in gated),
            'compared': len(gated),
        },
        'runs': [_run(baseline), _run(candidate)],
        'averages': [_average(a, evaluators) for a in _regressions_first(comparison.averages)],
        'evaluators': sorted({e for names in evaluators.values() for e in names}),
        'cases': _cases(comparison),
    }
    return payload


def _run(document: ReportDocument) -> dict[str, Any]:
    totals = document.totals
    return {
        'name': document.name,
        'cases': totals.cases,
        'failed_cases': totals.failed_cases,
        'case_failures': totals.case_failures,
        'fail_rate': format_number(totals.fail_rate),
    }


def _regressions_first(averages: Iterable[AverageChange]) -> list[AverageChange]:
    items = list(averages)
    return [a for a in items if a.regressed] + [a for a in items if not a.regressed]


def _evaluator_names(*documents: ReportDocument) -> dict[str, set[str]]:
    """For each result name, the evaluators that produced it (its own name when a report does not say)."""
    names: dict[str, set[str]] = {}
    for document in documents:
        for case in document.cases:
            for result, evaluator in _case_evaluators(case):
                names.setdefault(result, set()).add(evaluator)
    return names


def _case_evaluators(case: CaseResult) -> Iterable[tuple[str, str]]:
    for results in (case.scores, case.assertions, case.labels):
        for name, result in results.items():
            yield name, result.evaluator or name
    for error in case.evaluator_errors:
        yield error.name, error.evaluator or error.name


def _average(change: AverageChange, evaluators: Mapping[str, set[str]]) -> dict[str, Any]:
    b, c, delta = change.baseline, change.candidate, change.delta
    metric = change.kind == 'metric'

    def shown(value: float | None, other: float | None) -> str | None:
        if value is None:
            return None
        return format_metric(change.name, value, other) if metric else format_number(value, other)

    return {
        'name': change.name,
        'kind': change.kind,
        'evaluators': sorted(evaluators.get(change.name, ())) if change.kind in ('score', 'pass rate') else [],
        'baseline': shown(b, c),
        'candidate': shown(c, b),
        'delta': None if delta is None else signed(delta),
        'status': 'regressed' if change.regressed else 'improved' if change.improved else '',
        'summary': change.describe(),
    }


def _cases(comparison: Comparison) -> list[dict[str, Any]]:
    baseline, candidate = comparison.baseline, comparison.candidate
    old = {c.name: c for c in baseline.cases}
    new = {c.name: c for c in candidate.cases}
    old_failed = {f.name: f for f in baseline.failures}
    new_failed = {f.name: f for f in candidate.failures}
    changes: dict[str, dict[str, CaseChange]] = {}
    for change in comparison.cases:
        changes.setdefault(change.case, {})[change.result] = change
    names = [*old, *old_failed, *new, *new_failed]
    cases = [
        _case(name, old.get(name), new.get(name), old_failed.get(name), new_failed.get(name), changes.get(name, {}))
        for name in dict.fromkeys(names)
    ]
    order = {'worse': 0, 'changed': 1, 'unchanged': 2}
    return sorted(cases, key=lambda c: order[c['change']])  # stable: report order within each group


def _case(
    name: str,
    old: CaseResult | None,
    new: CaseResult | None,
    old_failure: CaseFailure | None,
    new_failure: CaseFailure | None,
    changes: Mapping[str, CaseChange],
) -> dict[str, Any]:
    whole = changes.get(CASE)
    old_cells, new_cells = _cells(old), _cells(new)
    results = []
    for result in sorted(old_cells.keys() | new_cells.keys()):
        was, now = old_cells.get(result), new_cells.get(result)
        change = changes.get(result)
        results.append(
            {
                'name': result,
                'kind': (now or was or {}).get('kind'),
                'evaluator': (now or was or {}).get('evaluator'),
                'baseline': was,
                'candidate': now,
                'changed': change is not None,
                'worse': change is not None and change.worse,
            }
        )
    worse = any(c.worse for c in changes.values())
    case: dict[str, Any] = {
        'name': name,
        'change': 'worse' if worse else 'changed' if changes else 'unchanged',
        'states': [_state(old, old_failure), _state(new, new_failure)],
        'case_change': None
        if whole is None
        else {'baseline': whole.baseline, 'candidate': whole.candidate, 'worse': whole.worse},
        'results': results,
        'evaluators': sorted({r['evaluator'] for r in results if r['evaluator'] is not None}),
    }
    if changes:  # the trajectories only where something changed: a large run stays a small file
        case['runs'] = [_side(old, old_failure), _side(new, new_failure)]
    return case


def _state(case: CaseResult | None, failure: CaseFailure | None) -> str:
    return 'ran' if case is not None else 'failed to run' if failure is not None else 'absent'


def _cells(case: CaseResult | None) -> dict[str, dict[str, Any]]:
    """Each result of a case as shown: kind, value text, pass/fail, reason and evaluator."""
    if case is None:
        return {}
    cells: dict[str, dict[str, Any]] = {}
    for name, label in case.labels.items():
        cells[name] = {'kind': 'label', 'value': label.value, 'reason': label.reason, 'evaluator': label.evaluator}
    for name, score in case.scores.items():
        value = 'n/a' if score.value is None else format_number(score.value)
        cells[name] = {'kind': 'score', 'value': value, 'reason': score.reason, 'evaluator': score.evaluator}
    for name, assertion in case.assertions.items():
        cells[name] = {
            'kind': 'assertion',
            'value': 'pass' if assertion.value else 'FAIL',
            'passed': assertion.value,
            'reason': assertion.reason,
            'evaluator': assertion.evaluator,
        }
    for error in case.evaluator_errors:
        cells[error.name] = {'kind': 'error', 'value': 'ERROR', 'reason': error.message, 'evaluator': error.evaluator}
    for name, cell in cells.items():
        cell['evaluator'] = cell['evaluator'] or name
    return cells


def _side(case: CaseResult | None, failure: CaseFailure | None) -> dict[str, Any] | None:
    """One run of a case: its trace, metrics, tool calls, agents, model requests and alignments."""
    if case is None:
        return None if failure is None else {'error': failure.error}
    return {
        'trace_id': case.trace_id,
        'span_id': case.span_id,
        'duration': format_metric('duration', case.duration),
        'metrics': {name: format_metric(name, value) for name, value in case.metrics.items()},
        'timeline': None if case.timeline is None else _timeline(case.timeline, case.account),
        'alignments': [_alignment(a) for a in case.alignments],
    }


def _finite(value: float) -> float | None:
    """A number for the page: JSON has no NaN or infinity (a hand-edited report may)."""
    return value if math.isfinite(value) else None


def _timeline(timeline: Timeline, account: TraceAccount | None) -> dict[str, Any]:
    """A request's tokens are null where the trace recorded none (`html.tokens_recorded`)."""
    return {
        'agents': [
            {'name': a.name, 'path': a.path, 'start': _finite(a.start), 'end': _finite(a.end), 'span_id': a.span_id}
            for a in timeline.agents
        ],
        'calls': [
            {
                'name': c.name,
                'status': c.status,
                'agent_path': c.agent_path,
                'start': _finite(c.start),
                'end': _finite(c.end),
                **_arguments(c.arguments),
                'result': c.result,
                'failure_stage': c.failure_stage,
                'output_function': c.output_function,
            }
            for c in timeline.calls
        ],
        'requests': [
            {
                'model': r.model,
                'agent_path': r.agent_path,
                'start': _finite(r.start),
                'end': _finite(r.end),
                **(
                    {'input_tokens': r.input_tokens, 'output_tokens': r.output_tokens}
                    if tokens_recorded(r, account)
                    else {'input_tokens': None, 'output_tokens': None}
                ),
                'cost': None if r.cost is None else _finite(r.cost),
            }
            for r in timeline.requests
        ],
        'omitted': timeline.omitted,
    }


def _arguments(text: str | None) -> dict[str, Any]:
    """A call's arguments for the page: `fields`, each key with its value as JSON text, when they are a
    JSON object; else `arguments`, the text as recorded (`None` when it was not).

    Parsed here, not in the page, so that what a key or value holds after JSON's own escapes
    (`"\\u202e"`) is made `visible` too; the page compares the value texts to mark what differs.
    """
    if text is not None:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # the model's invalid text, or text cut at the limit
            value = None
        if isinstance(value, dict):
            return {'fields': [[key, _json_value(item)] for key, item in value.items()]}
    return {'arguments': text}


def _json_value(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):  # nested beyond what the writer recurses into
        return repr(value)


def _alignment(alignment: Alignment) -> dict[str, Any]:
    return {
        'result': alignment.result,
        'evaluator': alignment.evaluator,
        'turn': alignment.turn,
        'rows': [
            {
                'status': r.status,
                'expected': r.expected,
                'actual': r.actual,
                'keys': r.keys,
                'differences': r.differences,
            }
            for r in alignment.rows
        ],
    }
