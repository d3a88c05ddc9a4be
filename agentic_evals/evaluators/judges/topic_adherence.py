"""TopicAdherence: does the agent stay on its topics, and answer what falls under them?"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal, get_args

from pydantic_ai import Agent, ModelRetry, RunContext, models
from pydantic_ai.settings import ModelSettings
from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext

from .. import _checks as checks
from .base import JudgeEvaluator
from .prompts import (
    TOPIC_ADHERENCE_PROMPT,
    TopicsAnswer,
    build_prompt,
)

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

    def problems(self) -> list[str | None]:
        return [
            checks.topics('reference_topics', self.reference_topics),
            checks.choice('mode', self.mode, get_args(TopicAdherenceMode)),
        ]

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
