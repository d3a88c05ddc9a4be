"""`assert_trajectory`: an agent's unit test checks its trajectory with the evaluators, in one line.

    with capture() as captured:
        agent.run_sync('Refund order A1')
    assert_trajectory(captured, ToolCallMatch([...], mode='in_order'))

A failing check raises `AssertionError` with the evaluator's reason and, for `ToolCallMatch`, the
expected calls against the actual ones, aligned, so pytest's output says what the agent did wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_evals.evaluators import EvaluationReason, Evaluator
from pydantic_evals.otel import SpanTree, SpanTreeRecordingError

from .capturing import Capture
from .conversations import trajectory_from_messages
from .evaluators.tool_call_match import ToolCallMatch
from .offline.context import evaluator_context
from .scoring.tool_call_match import ToolCallMatchResult, show
from .trajectory.extract import extract_trajectory
from .trajectory.trajectory import Trajectory

MAX_DIFF_LINES = 40
"""The longest diff a failure shows: enough to see what went wrong, short enough to read."""


def assert_trajectory(
    captured: Capture | SpanTree | Sequence[Any],
    *evaluators: Evaluator[Any, Any, Any],
    inputs: Any = None,
    output: Any = None,
    metrics: dict[str, int | float] | None = None,
) -> None:
    """Run `evaluators` on what was captured; raise `AssertionError` naming every check that failed.

    `captured` is a `capture()` block, a `SpanTree`, or a message history (pydantic-ai, OpenAI chat
    or ragas messages, scored as the evaluators' `conversation` source). An assertion fails when it
    is `False`; a score when it is below its evaluator's `threshold`, or below 1.0 without one (a
    unit test expects the trajectory it names). `inputs`, `output` and `metrics` fill the context
    for evaluators that read them.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    if not evaluators:
        raise TypeError('assert_trajectory needs at least one evaluator')
    if isinstance(captured, (Capture, SpanTree)):
        ctx = evaluator_context(captured, inputs=inputs, output=output, metrics=metrics)
        trajectory: Trajectory | None = None
    else:
        # A message history is also the case's output, for evaluators reading `conversation='output'`.
        no_spans = SpanTreeRecordingError('a message history was given, not spans')
        ctx = evaluator_context(no_spans, inputs=inputs, output=captured if output is None else output)
        trajectory = trajectory_from_messages(captured)
    failures: list[str] = []
    for evaluator in evaluators:
        if trajectory is not None and getattr(evaluator, 'conversation', None) is None:
            result = _on_messages(evaluator, trajectory)
            outputs = {evaluator.get_default_evaluation_name(): result}
        else:
            outputs = _outputs(evaluator.evaluate_sync(ctx), evaluator.get_default_evaluation_name())
        threshold = getattr(evaluator, 'threshold', None)
        for name, result in outputs.items():
            if _failed(result.value, threshold, len(outputs) > 1):
                failures.append(f'{name}: {result.value!r}: {result.reason}' + _diff(evaluator, ctx, trajectory))
    if failures:
        raise AssertionError('trajectory check failed:\n' + '\n'.join(failures))


def _on_messages(evaluator: Evaluator[Any, Any, Any], trajectory: Trajectory) -> EvaluationReason:
    """Score a message history with one of our trajectory evaluators (no spans involved)."""
    score_scoped = getattr(evaluator, 'score_scoped', None)
    if score_scoped is None:
        raise TypeError(f'{type(evaluator).__name__} cannot score a message history: pass captured spans')
    result: EvaluationReason = score_scoped(trajectory, evaluator_context(SpanTree()))
    return result


def _outputs(output: object, name: str) -> dict[str, EvaluationReason]:
    if isinstance(output, EvaluationReason):
        return {name: output}
    if isinstance(output, dict):
        return {k: v if isinstance(v, EvaluationReason) else EvaluationReason(value=v) for k, v in output.items()}
    return {name: EvaluationReason(value=output)}  # type: ignore[arg-type]


def _failed(value: object, threshold: float | None, has_pass_result: bool) -> bool:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        if has_pass_result:
            return False  # the `_pass` assertion next to it carries the verdict
        return value < (1.0 if threshold is None else threshold)
    return False  # a label


def _diff(evaluator: Evaluator[Any, Any, Any], ctx: Any, trajectory: Trajectory | None) -> str:
    """Expected against actual calls, one line each, for `ToolCallMatch`; nothing for other evaluators."""
    if not isinstance(evaluator, ToolCallMatch):
        return ''
    if evaluator.conversation is not None:  # the same source the evaluator scored
        messages = getattr(ctx, evaluator.conversation)
        if callable(getattr(messages, 'all_messages', None)):
            messages = messages.all_messages()
        try:
            trajectory = trajectory_from_messages(messages, agent=evaluator.agent or 'main')
        except (ValueError, TypeError):
            return ''
    elif trajectory is None:
        try:
            trajectory = extract_trajectory(ctx.span_tree)
        except SpanTreeRecordingError:
            return ''
    result = evaluator.match(trajectory)
    if result.turns:
        return ''.join(f'\n  turn {n}:{_lines(turn, "    ")}' for n, turn in enumerate(result.turns, start=1))
    return _lines(result, '  ')


def _lines(result: ToolCallMatchResult, indent: str) -> str:
    """`=` paired, `-` expected but not made, `+` made but not expected, `~` the argument differences."""
    paired = dict(result.pairs)
    mismatched = {e: (a, problems) for e, a, problems in result.mismatches}
    lines: list[str] = []
    for e, call in enumerate(result.expected):
        if e in paired:
            lines.append(f'= {show(call)}')
        else:
            lines.append(f'- {show(call)}')
            if e in mismatched:
                a, problems = mismatched[e]
                lines.append(f'+ {show(result.actual[a])}')
                lines.append(f'~   {"; ".join(problems)}')
    shown = {a for a, _ in mismatched.values()}
    lines += [f'+ {show(result.actual[a])}' for a in result.extra if a not in shown]
    return ''.join(f'\n{indent}{line}' for line in _bounded(lines))


def _bounded(lines: list[str]) -> list[str]:
    """Long runs of paired calls folded to their ends, and at most `MAX_DIFF_LINES` lines in all."""
    folded: list[str] = []
    run: list[str] = []
    for line in [*lines, '']:
        if line.startswith('= '):
            run.append(line)
            continue
        folded += run if len(run) <= 4 else [run[0], f'= ... {len(run) - 2} more paired call(s)', run[-1]]
        run = []
        if line:
            folded.append(line)
    if len(folded) > MAX_DIFF_LINES:
        folded = [*folded[:MAX_DIFF_LINES], f'... and {len(folded) - MAX_DIFF_LINES} more line(s)']
    return folded
