"""Every framework fixture's run inputs and output, as a case scored without a dataset gets them.

`evaluate_traces` without a dataset makes each trace a case whose `inputs` and `output` are read
from the trace (what `agentic-evals-otel run` and the judges use), so this pins, per route, that
the scenario's prompt and final answer are found where the instrumentation records them.
"""

from __future__ import annotations

import importlib

import pytest

from agentic_evals import evaluate_traces_sync, read_traces

from .scenario import ANSWER, FIXTURES, PROMPT

RUN_IO: dict[str, tuple[str | None, str | None]] = {
    'crewai/openinference.otlp.jsonl': (PROMPT, ANSWER),  # the task description and TaskOutput.raw
    'crewai/openinference-events.otlp.jsonl': (PROMPT, ANSWER),  # task_description, not the template
    'crewai/openinference-litellm.otlp.jsonl': (PROMPT, ANSWER),
    'google_adk/v1.otlp.jsonl': (PROMPT, ANSWER),  # call_llm's llm_request / llm_response JSON
    'google_adk/v2-content.otlp.jsonl': (PROMPT, ANSWER),
    # Content capture off: no span holds a message, a prompt or an answer.
    'google_adk/v2-no-content.otlp.jsonl': (None, None),
    'langgraph/langsmith.otlp.jsonl': (PROMPT, ANSWER),  # the graph's input and output state
    'langgraph/openinference.otlp.jsonl': (PROMPT, ANSWER),
    'llamaindex/openinference.otlp.jsonl': (PROMPT, ANSWER),
    'openai_agents/logfire.otlp.jsonl': (PROMPT, ANSWER),  # Chat completion spans' input / output
    'openai_agents/openinference-chat.otlp.jsonl': (PROMPT, ANSWER),
    'openai_agents/openinference-responses.otlp.jsonl': (PROMPT, ANSWER),
    # OpenLLMetry's Chat Completions spans record input messages only: the final text is nowhere.
    'openai_agents/openllmetry.otlp.jsonl': (PROMPT, None),
    'pydantic_ai/mixed-langgraph.otlp.jsonl': (PROMPT, ANSWER),
    'pydantic_ai/scenario.otlp.jsonl': (PROMPT, ANSWER),
    'smolagents/openinference.otlp.jsonl': (PROMPT, ANSWER),
    # The prompt is only in invoke_agent's `gen_ai.user.message` event, which the trace readers do
    # not copy onto the span; the answer is the last chat span's `gen_ai.choice` text blocks.
    'strands/default.otlp.jsonl': (PROMPT, ANSWER),  # the prompt from the agent span's event
    'strands/latest.otlp.jsonl': (PROMPT, ANSWER),  # the model's text, without the newline
    # that Strands appends on invoke_agent
}


OWN_TESTS = ('autogen', 'dspy', 'haystack', 'langfuse', 'langgraph_js', 'mastra', 'vercel_ai')
"""Frameworks whose own test module (`test_<name>.py`) lists its files' inputs and outputs in its
`RUN_IO`, and tests them there."""


def test_every_fixture_is_listed() -> None:
    every = dict(RUN_IO)
    for name in OWN_TESTS:  # imported when asked: each is a test module of its own
        every.update(importlib.import_module(f'{__package__}.test_{name}').RUN_IO)
    assert sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.glob('*/*.otlp.jsonl')) == sorted(every)


@pytest.mark.parametrize(('file', 'expected'), RUN_IO.items(), ids=RUN_IO.keys())
def test_run_inputs_and_output(file: str, expected: tuple[str | None, str | None]) -> None:
    (case,) = evaluate_traces_sync(read_traces(FIXTURES / file)).cases
    assert (case.inputs, case.output) == expected
