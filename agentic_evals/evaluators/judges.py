"""LLM-judged evaluators: topic adherence, goal accuracy, and a rubric over the whole trajectory.

They choose and call their model the way pydantic-evals' `LLMJudge` does (a `model` field, else
the default judge model set with `set_default_judge_model`), show the judge the case's inputs,
output and rendered trajectory, make it answer with a pydantic model, and compute scores from
that answer in Python. A judge that cannot answer (model error, network error, invalid output
after retries) gives a failing result whose reason starts `judge failed:`; it never raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal, get_args

from pydantic_ai import Agent, ModelRetry, RunContext, models
from pydantic_ai.settings import ModelSettings
from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext, EvaluatorOutput, OutputConfig

from ._judge_base import CannotJudge, JudgeEvaluator
from ._judge_prompts import (
    GOAL_INFERRED_PROMPT,
    GOAL_WITH_REFERENCE_PROMPT,
    TOPIC_ADHERENCE_PROMPT,
    TRAJECTORY_JUDGE_PROMPT,
    GoalAnswer,
    InferredGoalAnswer,
    TopicsAnswer,
    TrajectoryGrading,
    build_prompt,
)

__all__ = ('AgentGoalAccuracy', 'TopicAdherence', 'TopicAdherenceMode', 'TrajectoryJudge')

TopicAdherenceMode = Literal['precision', 'recall', 'f1']

_topic_agent = Agent[tuple[str, ...], TopicsAnswer](
    name='topic_adherence_judge',
    system_prompt=TOPIC_ADHERENCE_PROMPT,
    output_type=TopicsAnswer,
    deps_type=tuple,
)


@_topic_agent.output_validator
def _known_reference_topics(ctx: RunContext[tuple[str, ...]], answer: TopicsAnswer) -> TopicsAnswer:
    """Map each `reference_topic` onto the configured spelling; ask again when one is not a reference topic."""
    canonical = {topic.strip().casefold(): topic for topic in ctx.deps}
    unknown: list[str] = []
    for verdict in answer.topics:
        if verdict.reference_topic is not None:
            match = canonical.get(verdict.reference_topic.strip().casefold())
            if match is None:
                unknown.append(verdict.reference_topic)
            verdict.reference_topic = match
    if unknown:
        raise ModelRetry(f'reference_topic must be one of {list(ctx.deps)!r} or null; got {unknown!r}')
    return answer


@dataclass(repr=False)
class TopicAdherence(JudgeEvaluator):
    """How well the agent kept to `reference_topics`, as ragas' `TopicAdherence` scores it.

    The judge lists the conversation's topics and, per topic, whether the agent answered or
    refused it and which reference topic it falls under. Then, in Python:
    precision = answered on-topic / answered; recall = answered on-topic / (answered on-topic +
    refused on-topic); F1 = their harmonic mean. An undefined ratio (0/0) scores 0, as in ragas.

    Args:
        reference_topics: The topics the agent is meant to handle.
        mode: `'precision'` (did it stay on topic), `'recall'` (did it answer what it should), or
            `'f1'` (ragas' default).
        model: The judge model (name or `Model`); `None` uses pydantic-evals' default judge model.
        model_settings: Settings for the judge model.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Show the judge only what this agent (and its sub-agents) did.
        include_subagents: With `False`, leave out what sub-agents did.
    """

    reference_topics: list[str]
    mode: TopicAdherenceMode = 'f1'
    model: models.Model | models.KnownModelName | str | None = None
    model_settings: ModelSettings | None = None
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True

    def __post_init__(self) -> None:
        if not self.reference_topics or not all(isinstance(t, str) and t.strip() for t in self.reference_topics):
            raise ValueError(f'reference_topics must be a non-empty list of topics, got {self.reference_topics!r}')
        if self.mode not in get_args(TopicAdherenceMode):
            raise ValueError(f"mode must be 'precision', 'recall' or 'f1', got {self.mode!r}")

    async def judge(self, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        sections = [*self.material(ctx).sections, ('ReferenceTopics', '\n'.join(self.reference_topics))]
        answer = await self.ask(_topic_agent, build_prompt(sections), tuple(self.reference_topics))
        return _topic_score(answer, self.mode)

    def failure(self, reason: str) -> EvaluationReason:
        return EvaluationReason(value=0.0, reason=reason)


def _topic_score(answer: TopicsAnswer, mode: TopicAdherenceMode) -> EvaluationReason:
    if not answer.topics:
        return EvaluationReason(value=0.0, reason='the judge found no topics in the conversation')
    groups: dict[tuple[bool, bool], list[str]] = {key: [] for key in _TOPIC_GROUPS}
    for verdict in answer.topics:
        on_topic = verdict.reference_topic is not None
        label = f'{verdict.topic!r} -> {verdict.reference_topic!r}' if on_topic else repr(verdict.topic)
        groups[verdict.answered, on_topic].append(label)
    hits, answered_off, refused_on = len(groups[True, True]), len(groups[True, False]), len(groups[False, True])
    precision, precision_text = _ratio('precision', hits, hits + answered_off)
    recall, recall_text = _ratio('recall', hits, hits + refused_on)
    if mode == 'precision':
        value, summary = precision, precision_text
    elif mode == 'recall':
        value, summary = recall, recall_text
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else Fraction(0)
        value, summary = f1, f'F1={float(f1):.3f} ({precision_text}, {recall_text})'
    details = '; '.join(f'{name}: {", ".join(sorted(groups[key])) or "none"}' for key, name in _TOPIC_GROUPS.items())
    return EvaluationReason(value=float(value), reason=f'{summary}; {details}')


_TOPIC_GROUPS = {
    (True, True): 'answered on-topic',
    (True, False): 'answered off-topic',
    (False, True): 'refused on-topic',
    (False, False): 'refused off-topic',
}
"""(answered, falls under a reference topic) -> how the reason names the group."""


def _ratio(name: str, numerator: int, denominator: int) -> tuple[Fraction, str]:
    if denominator == 0:
        return Fraction(0), f'{name}=0/0 (undefined, scored 0)'
    value = Fraction(numerator, denominator)
    return value, f'{name}={numerator}/{denominator}={float(value):.3f}'


_goal_agent = Agent[None, GoalAnswer](
    name='agent_goal_accuracy_judge', system_prompt=GOAL_WITH_REFERENCE_PROMPT, output_type=GoalAnswer
)
_inferred_goal_agent = Agent[None, InferredGoalAnswer](
    name='agent_goal_accuracy_judge', system_prompt=GOAL_INFERRED_PROMPT, output_type=InferredGoalAnswer
)


@dataclass(repr=False)
class AgentGoalAccuracy(JudgeEvaluator):
    """1.0 when the agent achieved the goal, else 0.0, like ragas' `AgentGoalAccuracy` pair.

    With a `reference` (the desired outcome) the judge decides whether the outcome achieves it
    (ragas' `...WithReference`); without one it first infers the user's goal from the inputs
    (`...WithoutReference`). A float, not a bool, so a report's average is the accuracy.

    Args:
        reference: The desired outcome; `None` lets the judge infer the goal.
        use_expected_output: When `reference` is `None`, use the case's `expected_output` as the
            reference (a case without one fails instead of silently switching to inference).
        model: The judge model (name or `Model`); `None` uses pydantic-evals' default judge model.
        model_settings: Settings for the judge model.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Show the judge only what this agent (and its sub-agents) did.
        include_subagents: With `False`, leave out what sub-agents did.
    """

    reference: str | None = None
    use_expected_output: bool = False
    model: models.Model | models.KnownModelName | str | None = None
    model_settings: ModelSettings | None = None
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True

    def __post_init__(self) -> None:
        if self.reference is not None and not (isinstance(self.reference, str) and self.reference.strip()):
            raise ValueError(f'reference must be a non-empty string or None, got {self.reference!r}')

    async def judge(self, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        reference: object = self.reference
        if reference is None and self.use_expected_output:
            if ctx.expected_output is None:
                raise CannotJudge('no reference: `reference` is not set and the case has no expected_output')
            reference = ctx.expected_output
        sections = self.material(ctx).sections
        if reference is None:
            inferred = await self.ask(_inferred_goal_agent, build_prompt(sections))
            achieved, reason = inferred.achieved, inferred.reason
            facts = f'inferred goal: {inferred.goal!r}; outcome: {inferred.outcome!r}'
        else:
            answer = await self.ask(_goal_agent, build_prompt([*sections, ('Reference', reference)]))
            achieved, reason, facts = answer.achieved, answer.reason, f'outcome: {answer.outcome!r}'
        verdict = 'goal achieved' if achieved else 'goal not achieved'
        return EvaluationReason(value=1.0 if achieved else 0.0, reason=f'{verdict}: {reason} ({facts})')

    def failure(self, reason: str) -> EvaluationReason:
        return EvaluationReason(value=0.0, reason=reason)


_trajectory_agent = Agent[None, TrajectoryGrading](
    name='trajectory_judge', system_prompt=TRAJECTORY_JUDGE_PROMPT, output_type=TrajectoryGrading
)


@dataclass(repr=False)
class TrajectoryJudge(JudgeEvaluator):
    """Grade what the agent did (its tool calls, arguments, failures) against a rubric.

    `LLMJudge` for the trajectory: the judge sees the inputs, the output and the rendered
    trajectory, and returns pass, score and reason; `score` and `assertion` choose what is reported
    exactly as in `LLMJudge`. Without a span tree there is nothing to grade: it fails without
    calling the model.

    Args:
        rubric: The statement the trajectory should make true, e.g. "never retries a failed call".
        model: The judge model (name or `Model`); `None` uses pydantic-evals' default judge model.
        include_expected_output: Also show the case's expected output.
        model_settings: Settings for the judge model.
        score: Report the score in [0, 1] (`False`: don't); as `LLMJudge.score`.
        assertion: Report pass/fail (`False`: don't); as `LLMJudge.assertion`.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Show the judge only what this agent (and its sub-agents) did.
        include_subagents: With `False`, leave out what sub-agents did.
    """

    rubric: str
    model: models.Model | models.KnownModelName | str | None = None
    include_expected_output: bool = False
    model_settings: ModelSettings | None = None
    score: OutputConfig | Literal[False] = False
    assertion: OutputConfig | Literal[False] = field(default_factory=lambda: OutputConfig(include_reason=True))
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True

    needs_trajectory = True

    def __post_init__(self) -> None:
        if not isinstance(self.rubric, str) or not self.rubric.strip():
            raise ValueError(f'rubric must be a non-empty string, got {self.rubric!r}')
        if self.score is False and self.assertion is False:
            raise ValueError('score and assertion are both False: the judge would report nothing')

    async def judge(self, ctx: EvaluatorContext[object, object, object]) -> EvaluatorOutput:
        sections = self.material(ctx).sections
        if self.include_expected_output and ctx.expected_output is not None:
            sections.append(('ExpectedOutput', ctx.expected_output))
        sections.append(('Rubric', self.rubric))
        grading = await self.ask(_trajectory_agent, build_prompt(sections))
        return self._results(grading.score, grading.pass_, grading.reason, failed=False)

    def failure(self, reason: str) -> EvaluatorOutput:
        return self._results(0.0, False, reason, failed=True)

    def _results(self, score: float, passed: bool, reason: str, *, failed: bool) -> EvaluatorOutput:
        """`LLMJudge`'s naming (`NAME_score` / `NAME_pass` when both); a failure always carries its reason."""
        both = self.score is not False and self.assertion is not False
        name = self.get_default_evaluation_name()
        results: dict[str, Any] = {}
        for config, value, suffix in [(self.score, score, '_score'), (self.assertion, passed, '_pass')]:
            if config is False:
                continue
            key = config.get('evaluation_name') or (name + suffix if both else name)
            results[key] = EvaluationReason(value, reason=reason) if failed or config.get('include_reason') else value
        return results
