"""DSPy through OpenInference (`openinference-instrumentation-dspy`, measured at 0.1.48 on DSPy 3.4.1).

The instrumentor wraps DSPy's classes, not a convention: every span is named after the class and
method it wraps, and `openinference` reads what follows the OpenInference keys (LM spans are LLM
spans; `{"kwargs": {...}}` tool inputs are unwrapped there). What only DSPy records, read here:

- **Calls** are TOOL spans named `{tool}.__call__` (or `{tool}.acall`) with no `tool.name`: the
  name is the span's, before the suffix. `input.value` is `{"kwargs": {...}}` (the arguments),
  `output.value` the tool's return value as JSON: a text result is a JSON string, read as its text.
- **`finish`**: `dspy.ReAct` ends a run by the model calling its own `finish` tool (no arguments,
  result `Completed.`), which ReAct always adds under that name: a `finish` span directly under a
  ReAct run is an output call (not scored as a tool the agent chose).
- **A failed call**: ReAct catches the exception and gives the model the observation
  `Execution error in {tool}: {traceback}`; the TOOL span has an ERROR status and the exception
  event, no output. Its result is that observation, read from the run's own output (`trajectory`,
  whose `tool_name_{i}` / `tool_args_{i}` / `observation_{i}` are the run's steps, matched to the
  run's tool spans from the last one back, since ReAct drops the oldest steps when the context
  overflows). DSPy's own argument check (`Tool._validate_and_parse_args`) raises
  `ValueError("Arg {name} is invalid: ...")` or `("Arg {name} is not in the tool's args.")`
  inside the span: that failure's stage is `validation`, any other `raised`.
- **Agent runs**: DSPy has no agent names. A ReAct module's span is `{Class}.forward` (or
  `.aforward`), its `input.value` exactly `{"input_args": {...}}` (`ReAct.forward(**input_args)`):
  the run is named after the module's class, `ReAct` for `dspy.ReAct` (subclass it to name an agent:
  `class Expert(dspy.ReAct)` runs as `Expert`). A ReAct run inside a tool is a sub-agent: the path
  comes from the nesting (`ReAct` > `ReAct`).
- **Prompt and answer**: the run's `input_args` (its one text field, else the fields as JSON) and
  its output (`output.value` without the `trajectory` and the extract step's `reasoning`: the one
  output field's value, else the fields).
- **Issued calls**: ReAct's model answers in text (ChatAdapter: `[[ ## next_tool_name ## ]]` ...);
  the predictor above the request records it parsed (`output.value` with `next_tool_name` and
  `next_tool_args`): one call per response, with no call id.

No call ids exist anywhere (ReAct has none). The LM spans record no token usage: with
`openinference-instrumentation-litellm` and DSPy's LiteLLM engine, LiteLLM's `completion` span
under each LM span does (`openinference` counts the innermost LLM span).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from pydantic_evals.otel.span_tree import SpanNode

from .arguments import json_or_none
from .family import Answer, Classifier, FailureStage, Family, IssuedCall, RunSpans
from .openinference import CHAIN, INPUT_VALUE, KWARGS, LLM, OUTPUT_VALUE, SPAN_KIND, TOOL, TOOL_NAME
from .otel import EXCEPTION_MESSAGE

TOOL_SUFFIXES: Final = ('.__call__', '.acall')
"""`Tool.__call__` / `Tool.acall` spans are named `{tool name}` + one of these."""
RUN_SUFFIXES: Final = ('.forward', '.aforward')
"""`Module.__call__` / `Module.acall` spans are named `{Class}` + one of these."""
DSPY_SUFFIXES: Final = TOOL_SUFFIXES + RUN_SUFFIXES
"""Every span the DSPy instrumentor makes (modules, predictors, adapters, LMs, tools) ends so."""
RUN_INPUT: Final = 'input_args'
"""ReAct's `forward(**input_args)`: the instrumentor records its inputs under this one key."""
FINISH: Final = 'finish'
"""The tool ReAct adds to every agent to end its run."""
TRAJECTORY: Final = 'trajectory'
REASONING: Final = 'reasoning'
"""What ReAct's extract step (a ChainOfThought) adds before the signature's outputs."""
TOOL_NAME_KEY: Final = 'tool_name_{}'
STEP_KEY: Final = re.compile(r'tool_name_(\d+)')
TOOL_ARGS_KEY: Final = 'tool_args_{}'
OBSERVATION_KEY: Final = 'observation_{}'
NEXT_TOOL_NAME: Final = 'next_tool_name'
NEXT_TOOL_ARGS: Final = 'next_tool_args'
INVALID_ARGUMENT = re.compile(r"Arg \S+ is (?:invalid: |not in the tool's args\.$)", re.DOTALL)
"""`Tool._validate_and_parse_args`'s errors (DSPy 3.x): the arguments failed the tool's schema."""


def _text(attributes: Mapping[str, Any], key: str) -> str | None:
    value = attributes.get(key)
    return value if isinstance(value, str) else None


_json = json_or_none


def tool_name(node: SpanNode) -> str | None:
    """The tool of a DSPy TOOL span (`{tool}.__call__`, no `tool.name`), else `None`."""
    attributes = node.attributes
    if attributes.get(SPAN_KIND) != TOOL or TOOL_NAME in attributes:
        return None
    name = node.name
    if not isinstance(name, str):
        return None
    for suffix in TOOL_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def run_inputs(node: SpanNode) -> dict[str, Any] | None:
    """The `input_args` of a ReAct module's run span, else `None`."""
    attributes = node.attributes
    name = node.name
    if attributes.get(SPAN_KIND) != CHAIN or not isinstance(name, str) or not name.endswith(RUN_SUFFIXES):
        return None
    text = _text(attributes, INPUT_VALUE)
    if text is None or not text.startswith('{'):
        return None
    value = _json(text)
    if not isinstance(value, dict) or value.keys() != {RUN_INPUT} or not isinstance(value[RUN_INPUT], dict):
        return None
    inputs: dict[str, Any] = value[RUN_INPUT]
    return inputs


def run_name(node: SpanNode) -> str | None:
    """The module class of a ReAct run span (`ReAct` for `ReAct.forward`), else `None`."""
    if run_inputs(node) is None:
        return None
    name = str(node.name)
    return name[: name.rindex('.')] or None


def _run_output(node: SpanNode) -> dict[str, Any] | None:
    value = _json(_text(node.attributes, OUTPUT_VALUE))
    return value if isinstance(value, dict) else None


def observation(node: SpanNode) -> str | None:
    """What ReAct told the model this tool call returned, from its run's `trajectory`."""
    run = node.parent
    if run is None or run_inputs(run) is None:
        return None
    output = _run_output(run)
    trajectory = None if output is None else output.get(TRAJECTORY)
    if not isinstance(trajectory, dict):
        return None
    steps = sorted((int(m[1]) for key in trajectory if (m := STEP_KEY.fullmatch(key))), reverse=True)
    calls = sorted((c for c in run.children if tool_name(c) is not None), key=lambda c: c.start_timestamp)
    # From the last step and call back (ReAct drops the oldest steps when the context overflows);
    # a step naming a tool that does not exist ran no span, so it matches no call.
    pending = iter(steps)
    for call in reversed(calls):
        wanted = (tool_name(call), _kwargs(call))
        step = next((i for i in pending if _step(trajectory, i) == wanted), None)
        if step is None:
            return None
        if call is node:
            found = trajectory.get(OBSERVATION_KEY.format(step))
            return found if isinstance(found, str) or found is None else json.dumps(found)
    return None


def _step(trajectory: Mapping[str, Any], i: int) -> tuple[Any, Any]:
    return trajectory[TOOL_NAME_KEY.format(i)], trajectory.get(TOOL_ARGS_KEY.format(i))


def _kwargs(call: SpanNode) -> Any:
    recorded = _json(_text(call.attributes, INPUT_VALUE))
    return recorded.get(KWARGS) if isinstance(recorded, dict) else None


def classify_call(node: SpanNode, notes: list[str]) -> Answer:
    name = tool_name(node)
    if name is None:
        return None
    if name == FINISH and node.parent is not None and run_inputs(node.parent) is not None:
        return name, 'output'
    return name, 'failed' if node.status == 'error' else 'ok'


class DSPy(Family):
    """DSPy's OpenInference spans where they differ from the keys `openinference` reads (module docstring)."""

    name = 'dspy'
    run_spans = RunSpans(suffixes=RUN_SUFFIXES)

    def recognises(self, node: SpanNode) -> bool:
        return tool_name(node) is not None or run_inputs(node) is not None

    def call_classifiers(self) -> Mapping[str, Classifier]:
        return {SPAN_KIND: classify_call}

    def result(self, node: SpanNode) -> str | None:
        if tool_name(node) is None:
            return None
        text = _text(node.attributes, OUTPUT_VALUE)
        if text is None:
            return observation(node) if node.status == 'error' else None
        value = _json(text)
        return value if isinstance(value, str) else text

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        if tool_name(node) is None:
            return None
        message = _text(node.attributes, EXCEPTION_MESSAGE)
        return 'validation' if message is not None and INVALID_ARGUMENT.match(message) else 'raised'

    def issued(self, node: SpanNode) -> list[IssuedCall] | None:
        """The step a ReAct request chose, from the predictor above it that parsed the response;
        `[]` for the run's other requests (the extract step's answer)."""
        if node.attributes.get(SPAN_KIND) != LLM:
            return None
        ancestor = node.parent
        while ancestor is not None and tool_name(ancestor) is None:
            name = ancestor.name
            if not isinstance(name, str) or not name.endswith(DSPY_SUFFIXES):
                return None  # only DSPy's wrappers (`{Class}.{method}`) lie between a request and its predictor
            if run_inputs(ancestor) is not None:
                return []
            value = _json(_text(ancestor.attributes, OUTPUT_VALUE))
            if isinstance(value, list) and len(value) == 1:
                value = value[0]  # the adapter's list of completions
            if isinstance(value, dict) and isinstance(chosen := value.get(NEXT_TOOL_NAME), str):
                arguments = value.get(NEXT_TOOL_ARGS)
                return [IssuedCall(None, chosen, None if arguments is None else json.dumps(arguments))]
            ancestor = ancestor.parent
        return None

    def agent_run(self, node: SpanNode) -> str | None:
        return run_name(node)

    def run_prompt(self, agent: SpanNode) -> str | None:
        inputs = run_inputs(agent)
        if not inputs:
            return None
        if len(inputs) == 1 and isinstance(value := next(iter(inputs.values())), str):
            return value
        return json.dumps(inputs)

    def run_output(self, agent: SpanNode) -> Any:
        if run_inputs(agent) is None:
            return None
        output = _run_output(agent)
        if output is None:
            return None
        fields = {key: value for key, value in output.items() if key != TRAJECTORY}
        if len(fields) > 1:
            fields.pop(REASONING, None)
        if len(fields) == 1:
            return next(iter(fields.values()))
        return fields or None


FAMILY = DSPy()
