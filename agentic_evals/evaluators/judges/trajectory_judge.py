"""TrajectoryJudge: an LLM grades the whole trajectory against a rubric."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import Agent, models
from pydantic_ai.settings import ModelSettings
from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext, EvaluatorOutput, OutputConfig

from .. import _checks as checks
from .base import JudgeEvaluator, output_config_problem
from .prompts import (
    TRAJECTORY_JUDGE_PROMPT,
    TrajectoryGrading,
    build_prompt,
)

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

    def problems(self) -> list[str | None]:
        return [
            checks.non_empty_text('rubric', self.rubric),
            checks.flag('include_expected_output', self.include_expected_output),
            output_config_problem('score', self.score),
            output_config_problem('assertion', self.assertion),
            'score and assertion are both False: the judge would report nothing'
            if self.score is False and self.assertion is False
            else None,
        ]

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
