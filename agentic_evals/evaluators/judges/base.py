"""What the LLM judges share: choosing the model, gathering what the judge sees, turning errors into results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_ai import Agent, models
from pydantic_ai.settings import ModelSettings
from pydantic_evals.evaluators import Evaluator, EvaluatorContext, EvaluatorOutput, llm_as_a_judge
from pydantic_evals.otel import SpanTree, SpanTreeRecordingError

from ...errors import AgenticEvalsError
from ...trajectory.extract import extract_trajectory
from ...trajectory.rendering import NO_TRAJECTORY, render_trajectory
from ...trajectory.run_io import trace_inputs, trace_output
from .. import _checks as checks
from .._base import no_span_tree_reason
from .prompts import NOT_RECORDED

# pydantic-evals' documented starting default, used only if its private global ever disappears.
_PYDANTIC_EVALS_DEFAULT_MODEL = 'openai:gpt-5.2'
_MAX_ERROR_CHARS = 500
_OUTPUT_CONFIG_KEYS = ('evaluation_name', 'include_reason')

_Answer = TypeVar('_Answer')


def default_judge_model() -> models.Model | str:
    """The model `LLMJudge` uses when given none: as last set by `set_default_judge_model`.

    pydantic-evals (2.4 through 2.62) keeps it in the private module global `_default_model` and
    has no getter; reading it keeps one switch for `LLMJudge` and these judges.
    """
    value = getattr(llm_as_a_judge, '_default_model', None)
    return value if isinstance(value, (models.Model, str)) else _PYDANTIC_EVALS_DEFAULT_MODEL


class CannotJudge(AgenticEvalsError):
    """Carries the reason of a failing result out of the judging steps."""


@dataclass(frozen=True)
class JudgeMaterial:
    """What every judge is shown: inputs and output (placeholders when absent) and the trajectory text."""

    inputs: object
    output: object
    trajectory: str

    @property
    def sections(self) -> list[tuple[str, object]]:
        """The prompt sections every judge starts with; each judge appends its own."""
        return [('Input', self.inputs), ('Output', self.output), ('Trajectory', self.trajectory)]


class JudgeEvaluator(Evaluator[object, object, object]):
    """Base of the LLM judges. Not a dataclass, so each subclass's main argument stays its first field.

    Subclasses declare the fields annotated here and implement `judge` and `failure`; `evaluate`
    turns any `CannotJudge` raised while judging into `failure(reason)`. Settings are checked when
    the judge is built, as the deterministic evaluators' are: the shared fields here, the
    subclass's own in `problems`.
    """

    model: models.Model | models.KnownModelName | str | None
    model_settings: ModelSettings | None
    evaluation_name: str | None
    agent: str | None
    include_subagents: bool

    needs_trajectory = False
    """Fail without calling the model when the case has no span tree (else judge inputs and output)."""

    def __post_init__(self) -> None:
        settings = self.model_settings
        checks.raise_problems(
            self,
            [
                *self.problems(),
                model_problem('model', self.model),
                None if settings is None else checks.mapping('model_settings', settings, 'setting names'),
                checks.optional_str('evaluation_name', self.evaluation_name),
                checks.optional_str('agent', self.agent),
                checks.flag('include_subagents', self.include_subagents),
            ],
        )

    def problems(self) -> list[str | None]:
        """The subclass's own configuration problems (see `_checks`); `None` entries are fine."""
        return []

    async def evaluate(self, ctx: EvaluatorContext[object, object, object]) -> EvaluatorOutput:
        try:
            return await self.judge(ctx)
        except CannotJudge as e:
            return self.failure(str(e))

    async def judge(self, ctx: EvaluatorContext[object, object, object]) -> EvaluatorOutput:
        raise NotImplementedError

    def failure(self, reason: str) -> EvaluatorOutput:
        raise NotImplementedError

    def get_default_evaluation_name(self) -> str:
        return self.evaluation_name if isinstance(self.evaluation_name, str) else self.get_serialization_name()

    def build_serialization_arguments(self) -> dict[str, Any]:
        # As `LLMJudge` does: a `Model` instance is written as its id, so the spec stays YAML.
        arguments = super().build_serialization_arguments()
        if isinstance(arguments.get('model'), models.Model):
            arguments['model'] = arguments['model'].model_id
        return arguments

    def material(self, ctx: EvaluatorContext[object, object, object]) -> JudgeMaterial:
        """Inputs, output and rendered trajectory; the case's inputs and output first, else the trace's."""
        tree: SpanTree | None
        try:
            tree = ctx.span_tree
        except SpanTreeRecordingError as e:
            if self.needs_trajectory:
                raise CannotJudge(no_span_tree_reason(e)) from None
            tree, rendered = None, NO_TRAJECTORY
        else:
            trajectory = extract_trajectory(tree)
            if self.agent is not None and not trajectory.has_agent(self.agent):
                raise CannotJudge(
                    f'agent {self.agent!r} not found in the trace; agents seen: {trajectory.agent_names!r}'
                )
            rendered = render_trajectory(trajectory, agent=self.agent, include_subagents=self.include_subagents)
        inputs = ctx.inputs if ctx.inputs is not None or tree is None else trace_inputs(tree)
        output = ctx.output if ctx.output is not None or tree is None else trace_output(tree)
        if tree is None and inputs is None and output is None:
            raise CannotJudge('nothing to judge: no inputs, no output and no span tree')
        return JudgeMaterial(
            inputs=NOT_RECORDED if inputs is None else inputs,
            output=NOT_RECORDED if output is None else output,
            trajectory=rendered,
        )

    async def ask(self, agent: Agent[Any, _Answer], prompt: str, deps: object = None) -> _Answer:
        """Run the judge agent; any error (model, network, invalid output after retries) becomes `CannotJudge`."""
        try:
            result = await agent.run(
                prompt, model=self.model or default_judge_model(), model_settings=self.model_settings, deps=deps
            )
        except Exception as e:
            raise CannotJudge(f'judge failed: {describe_error(e)}') from None
        return result.output


def model_problem(name: str, value: object) -> str | None:
    """A model name (any provider's: pydantic-ai resolves it when the judge runs), a `Model`, or `None`."""
    if value is None or isinstance(value, models.Model) or (isinstance(value, str) and value.strip()):
        return None
    return f"{name} must be a model name (e.g. 'openai:gpt-4o'), a pydantic-ai Model or None, got {value!r}"


def output_config_problem(name: str, value: object) -> str | None:
    """`False`, or an `OutputConfig` mapping (`evaluation_name`, `include_reason`, both optional) as in `LLMJudge`."""
    if value is False:
        return None
    if not isinstance(value, dict):
        return (
            f'{name} must be false or a mapping with evaluation_name and include_reason (both optional), got {value!r}'
        )
    unknown = sorted(str(k) for k in value.keys() - set(_OUTPUT_CONFIG_KEYS))
    if unknown:
        known = ', '.join(repr(k) for k in _OUTPUT_CONFIG_KEYS)
        return f'{name} has unknown key(s) {", ".join(repr(k) for k in unknown)} (known: {known})'
    problems = [
        None if 'evaluation_name' not in value else checks.text(f'{name}.evaluation_name', value['evaluation_name']),
        None if 'include_reason' not in value else checks.flag(f'{name}.include_reason', value['include_reason']),
    ]
    return '; '.join(p for p in problems if p is not None) or None


def describe_error(error: BaseException) -> str:
    """One line: the error and, when pydantic-ai wraps one, the last cause (why the output was rejected)."""
    text = f'{type(error).__name__}: {error}'
    cause = error.__cause__
    if isinstance(cause, ValidationError):
        problems = [f'{".".join(map(str, e["loc"])) or "output"}: {e["msg"]}' for e in cause.errors()]
        text += f' (last error: {"; ".join(problems)})'
    elif cause is not None:
        text += f' (last error: {type(cause).__name__}: {cause})'
    text = ' '.join(text.split())
    return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS] + '...'
