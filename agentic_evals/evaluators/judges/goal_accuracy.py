"""AgentGoalAccuracy: did the agent achieve what the user wanted?"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic_ai import Agent, models
from pydantic_ai.settings import ModelSettings
from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext

from .. import _checks as checks
from .base import CannotJudge, JudgeEvaluator
from .prompts import (
    GOAL_INFERRED_PROMPT,
    GOAL_WITH_REFERENCE_PROMPT,
    GoalAnswer,
    InferredGoalAnswer,
    build_prompt,
)

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

    def problems(self) -> list[str | None]:
        return [
            checks.optional_non_empty_text('reference', self.reference),
            checks.flag('use_expected_output', self.use_expected_output),
        ]

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
