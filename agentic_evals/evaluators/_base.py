"""What every evaluator here shares: reading the cached trajectory and the agent scope."""

from __future__ import annotations

from typing import Any, Literal

from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext
from pydantic_evals.otel import SpanTree, SpanTreeRecordingError

from ..capturing import CaptureError
from ..conversations import trajectory_from_messages
from ..scoring.metrics import MetricResult, NameList, missing_agent
from ..scoring.sequences import at_least
from ..trajectory.extract import extract_trajectory
from ..trajectory.trajectory import Recorded, Trajectory
from . import _checks as checks

# The built-ins' phrase, kept word for word so reasons read the same after switching imports.
NO_SPAN_TREE = 'No span tree available — ensure logfire/instrumentation is configured.'
NO_SPAN_TREE_REASON = (
    f'{NO_SPAN_TREE} (no spans were recorded: set any OpenTelemetry SDK tracer provider before the case'
    ' runs, e.g. trace.set_tracer_provider(TracerProvider()), or call logfire.configure())'
)
"""The reason without a span tree. Our own advice follows the built-ins' phrase, not pydantic-evals'
recording error: that one asks for `logfire.configure`, while any OpenTelemetry SDK provider works."""


def no_span_tree_reason(error: SpanTreeRecordingError) -> str:
    """`capture()`'s own errors say exactly what to change and are quoted; pydantic-evals' get our advice."""
    return f'{NO_SPAN_TREE} ({error.message})' if isinstance(error, CaptureError) else NO_SPAN_TREE_REASON


EvaluationValue = bool | float

ConversationSource = Literal['output', 'inputs']
"""Where a case keeps a conversation to score instead of the spans: its output or its inputs."""
CONVERSATIONS = ('output', 'inputs')


class TrajectoryEvaluator(Evaluator[object, object, object]):
    """Base of the evaluators that score the extracted trajectory.

    Not a dataclass itself: a dataclass base would put its fields first, and the first field must
    stay the main argument (the short YAML form passes it positionally). Subclasses declare
    `evaluation_name`, `agent`, `include_subagents` and `conversation` as their own last fields and
    implement `score`.
    """

    evaluation_name: str | None
    agent: str | None
    include_subagents: bool
    conversation: ConversationSource | None

    def __post_init__(self) -> None:
        problems = [
            checks.optional_str('evaluation_name', self.evaluation_name),
            checks.optional_str('agent', self.agent),
            checks.flag('include_subagents', self.include_subagents),
            None if self.conversation is None else checks.choice('conversation', self.conversation, CONVERSATIONS),
            *self.problems(),
        ]
        found = [p for p in problems if p is not None]
        if found:
            raise ValueError(f'{type(self).__name__}: {"; ".join(found)}')

    def reads(self) -> Recorded:
        """What the evaluator scores: a failing result on a trace that cannot show it says why."""
        return 'tool calls'

    def problems(self) -> list[str | None]:
        """The subclass's own configuration problems (see `_checks`); `None` entries are fine."""
        return []

    def get_default_evaluation_name(self) -> str:
        return self.evaluation_name if isinstance(self.evaluation_name, str) else self.get_serialization_name()

    def evaluate(self, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        if self.conversation is not None:
            return self.score_conversation(getattr(ctx, self.conversation), ctx)
        try:
            tree = ctx.span_tree
        except SpanTreeRecordingError as e:
            return EvaluationReason(value=self.failing_value, reason=no_span_tree_reason(e))
        return self.score_tree(tree, ctx)

    def score_tree(self, tree: SpanTree, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        """Extract (once per tree), check the agent scope, then `score`; a failing result on a trace
        nothing was recognised in says so (the likely cause, not the agent's fault)."""
        trajectory = extract_trajectory(tree)
        # `score_scoped`, inlined: on a small tree each call layer is a visible share of the time.
        missing = None if self.agent is None else missing_agent(trajectory, self.agent)
        if missing is not None:
            return EvaluationReason(value=self.failing_value, reason=missing)
        result = self.score(trajectory, ctx)
        value = result.value
        failing = value is False or (isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0)
        if not failing:
            return result  # a pass, a positive score or a label: nothing to explain
        if self.reads() == 'tool calls':
            note = trajectory.unrecorded('tool calls') if trajectory.call_count(include_failed=True) == 0 else None
        else:
            note = trajectory.unrecorded('model requests') if trajectory.request_count() == 0 else None
        if note is None or (result.reason is not None and note in result.reason):
            return result  # the calls were read, or the evaluator said so itself (the budgets do)
        return EvaluationReason(value=value, reason=note if result.reason is None else f'{result.reason}; {note}')

    def score_conversation(self, messages: Any, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        """Score the conversation in the case's output or inputs instead of the spans.

        A message history records no sub-agents, so its calls are attributed to `agent` (to `'main'`
        when no agent is named). An object with `all_messages()` (a pydantic-ai run result) is read
        through it.
        """
        if callable(getattr(messages, 'all_messages', None)):
            messages = messages.all_messages()
        where = f'ctx.{self.conversation}'
        if messages is None:
            return EvaluationReason(value=self.failing_value, reason=f'no conversation to score: {where} is None')
        try:
            trajectory = trajectory_from_messages(messages, agent=self.agent or 'main')
        except (ValueError, TypeError) as e:
            return EvaluationReason(value=self.failing_value, reason=f'{where} is not a conversation: {e}')
        return self.score_scoped(trajectory, ctx)

    def score_scoped(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        """Check that the scoped agent appears, then `score`."""
        missing = missing_agent(trajectory, self.agent)
        if missing is not None:
            return EvaluationReason(value=self.failing_value, reason=missing)
        return self.score(trajectory, ctx)

    @property
    def failing_value(self) -> EvaluationValue:
        """The value reported when there is nothing to score: `False`, or `0.0` for scores."""
        return False

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        raise NotImplementedError

    def scope(self) -> dict[str, Any]:
        """The agent scope, as the metric functions take it."""
        return {'agent': self.agent, 'include_subagents': self.include_subagents}


class ScoreEvaluator(TrajectoryEvaluator):
    """A trajectory evaluator whose value is a score, with an optional pass `threshold`.

    A score alone never fails a run: with `threshold` set, the evaluator also reports the assertion
    `<name>_pass` (the score is at least the threshold), so each case passes or fails on its own and
    one bad case cannot hide behind the mean. Subclasses declare `threshold` as their last field.
    """

    threshold: float | None

    def __post_init__(self) -> None:
        threshold = self.threshold
        ok = threshold is None or (
            isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and 0 <= threshold <= 1
        )
        if not ok:
            raise ValueError(f'{type(self).__name__}: threshold must be a number from 0 to 1, got {threshold!r}')
        super().__post_init__()

    def evaluate(  # type: ignore[override]  # a mapping of results when a threshold is set
        self, ctx: EvaluatorContext[object, object, object]
    ) -> EvaluationReason | dict[str, EvaluationReason]:
        result = super().evaluate(ctx)
        if self.threshold is None or isinstance(result.value, bool) or not isinstance(result.value, (int, float)):
            return result
        name = self.get_default_evaluation_name()
        passed = at_least(result.value, self.threshold)
        verdict = f'{result.value:.3f} {">=" if passed else "<"} threshold {self.threshold:g}'
        return {name: result, f'{name}_pass': EvaluationReason(value=passed, reason=verdict)}

    @property
    def failing_value(self) -> EvaluationValue:
        return 0.0


def prepared_names(evaluator: object, field: str) -> NameList | None:
    """The evaluator's `field` (a list of tool names) as a `NameList`, made once and kept on the
    evaluator, so its counts and text are not made again for every case; `None` when the field is
    not a list of names (turns).

    Kept while the field holds an equal list (a copy is compared), so reassigning or editing the
    list after construction is still seen.
    """
    names = getattr(evaluator, field)
    cache: dict[str, NameList] | None = evaluator.__dict__.get('_prepared_names')
    if cache is None:
        cache = evaluator.__dict__['_prepared_names'] = {}
    found = cache.get(field)
    if found is not None and type(names) is list and found.names == names:
        return found
    if type(names) is not list or not all(type(name) is str for name in names):
        return None
    prepared = cache[field] = NameList(names.copy(), texts=True)
    return prepared


def as_reason(result: MetricResult) -> EvaluationReason:
    """A metric function's result as the `EvaluationReason` pydantic-evals expects."""
    return EvaluationReason(value=result.value, reason=result.reason)
