"""What the judges are told and the structured answers they must give.

Every judge gets the same tagged sections (`<Input>`, `<Output>`, `<Trajectory>`, then its own)
in the style of pydantic-evals' `LLMJudge`, so a model primed on one reads the other the same way.
The answers are pydantic models: the judge fills in facts, and the scores are computed from them
in Python, never by the model.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field
from pydantic_core import to_json

NOT_RECORDED = 'not recorded'
"""Shown in `<Input>` or `<Output>` when the case and its trace have neither."""

_SECTIONS = """\
- <Input>: what the user asked.
- <Output>: the agent's final output.
- <Trajectory>: what the agent did, in order: the agents involved, its model requests, and every
  tool call attempt with the agent that made it, its arguments, whether it succeeded, failed (and
  why) or was deferred (did not run), and its result, possibly truncated. A failed or deferred call
  had no effect. It reads "no trajectory recorded" when none was recorded: then judge from <Input>
  and <Output> alone."""

_REASON = (
    'The "reason" field must be a concise 1-2 sentence justification. Do not include your reasoning'
    ' process, self-corrections, or re-checking in the reason. State only the final justification.'
)

TOPIC_ADHERENCE_PROMPT = f"""\
You review a conversation between a user and an AI agent: which topics it covered, and whether the
agent answered or refused each one.

You are given:
{_SECTIONS}
- <ReferenceTopics>: the topics the agent is meant to handle, one per line.

List every distinct topic of the conversation (raised by the user or taken up by the agent) as a
short phrase. For each topic:
- "answered": true if the agent answered it or acted on it (tool calls count); false if the agent
  refused, declined or deflected it.
- "reference_topic": the reference topic it falls under, copied exactly from <ReferenceTopics>, or
  null if it falls under none of them."""

GOAL_WITH_REFERENCE_PROMPT = f"""\
You judge whether an AI agent achieved the outcome its user wanted.

You are given:
{_SECTIONS}
- <Reference>: the desired outcome.

First state in "outcome" what the agent actually achieved by the end of the interaction, from its
output and the tool calls that took effect. Then set "achieved" to true only if that outcome
achieves the desired outcome in <Reference>: the wording may differ, the substance may not.
{_REASON}"""

GOAL_INFERRED_PROMPT = f"""\
You judge whether an AI agent achieved what its user wanted.

You are given:
{_SECTIONS}

First state in "goal" the outcome the user wanted, inferred from <Input>. Then state in "outcome"
what the agent actually achieved by the end of the interaction, from its output and the tool calls
that took effect. Then set "achieved" to true only if that outcome achieves the goal.
{_REASON}"""

TRAJECTORY_JUDGE_PROMPT = f"""\
You grade how an AI agent worked, according to a user-specified rubric.

You are given:
{_SECTIONS}
- <ExpectedOutput> (only sometimes): the output the agent was expected to give.
- <Rubric>: the statement to check.

If the statement in <Rubric> is true of what the agent did, the agent passes: set "pass" to true.
Set "score" from 0.0 to 1.0 to how fully the rubric is met.
{_REASON}"""


class TopicVerdict(BaseModel):
    topic: str = Field(description='A short phrase naming one topic of the conversation.')
    answered: bool = Field(
        description='True if the agent answered the topic or acted on it; false if it refused, declined or deflected.'
    )
    reference_topic: str | None = Field(
        description='The reference topic this topic falls under, copied exactly from <ReferenceTopics>; null if none.'
    )


class TopicsAnswer(BaseModel):
    topics: list[TopicVerdict] = Field(description='Every distinct topic of the conversation.')


class GoalAnswer(BaseModel):
    outcome: str = Field(description='What the agent actually achieved by the end of the interaction.')
    reason: str = Field(description='A concise 1-2 sentence justification for the verdict.')
    achieved: bool = Field(description='Whether the outcome achieves the desired outcome in <Reference>.')


class InferredGoalAnswer(BaseModel):
    goal: str = Field(description='The outcome the user wanted, inferred from <Input>.')
    outcome: str = Field(description='What the agent actually achieved by the end of the interaction.')
    reason: str = Field(description='A concise 1-2 sentence justification for the verdict.')
    achieved: bool = Field(description='Whether the outcome achieves the goal.')


class TrajectoryGrading(BaseModel, populate_by_name=True):
    """`LLMJudge`'s `GradingOutput` shape, with the score bounded so an out-of-range one is retried."""

    reason: str = Field(description='A concise 1-2 sentence justification for the verdict.')
    pass_: bool = Field(validation_alias='pass', serialization_alias='pass')
    score: float = Field(ge=0.0, le=1.0)


def build_prompt(sections: Sequence[tuple[str, object]]) -> str:
    """`<Tag>` ... `</Tag>` blocks in order; non-strings as JSON (else `repr`), as `LLMJudge` shows them."""
    return '\n'.join(f'<{tag}>\n{_stringify(content)}\n</{tag}>' for tag, content in sections)


def _stringify(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return to_json(value).decode()
    except Exception:
        return repr(value)
