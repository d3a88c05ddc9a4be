"""The inputs and output of an agent run, read from the spans it recorded.

Scoring a captured trace needs what the case was asked and what it answered, without the run. The
families say where each is recorded (pydantic-ai on its agent spans, the GenAI conventions in the
messages of model requests); this module decides which run's to take.
"""

from __future__ import annotations

from typing import Any

from pydantic_evals.otel.span_tree import SpanNode, SpanTree

from ..conventions.registry import REGISTRY as registry


def _outer_agent_spans(tree: SpanTree) -> list[SpanNode]:
    """Agent runs not nested in another agent run, in start order."""
    found: list[SpanNode] = []
    for node in sorted(tree, key=lambda n: n.start_timestamp):
        if registry.agent_run(node) is not None and not any(registry.agent_run(a) is not None for a in node.ancestors):
            found.append(node)
    return found


def trace_inputs(tree: SpanTree) -> Any:
    """The first user prompt of the first outermost agent run, or `None` when not recorded.

    The prompt the agent span recorded (pydantic-ai's whole conversation), else the first recorded
    on any span in start order (a model request's input messages): the text parts of the first user
    message, joined by newlines.
    """
    for agent in _outer_agent_spans(tree)[:1]:
        text = registry.run_prompt(agent)
        if text is not None:
            return text
    for node in sorted(tree, key=lambda n: n.start_timestamp):
        text = registry.span_prompt(node)
        if text is not None:
            return text
    return None


def trace_output(tree: SpanTree) -> Any:
    """The output of the last outermost agent run that recorded one, or `None`.

    The output the agent span recorded (pydantic-ai's `final_result`, parsed when it is a JSON object
    or array, as pydantic-ai records structured output), else the text of the run's last model
    response that answered with text.
    """
    for agent in reversed(_outer_agent_spans(tree)):
        output = registry.run_output(agent)
        if output is not None:
            return output
        text = _last_response_text(agent)
        if text is not None:
            return text
    return None


def _last_response_text(agent: SpanNode) -> str | None:
    requests = [n for n in agent.descendants if registry.is_model_request(n)]
    for node in sorted(requests, key=lambda n: n.start_timestamp, reverse=True):
        text = registry.response_text(node)
        if text is not None:
            return text
    return None
