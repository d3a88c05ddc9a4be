"""AutoGen (autogen-core / autogen-agentchat 0.7): GenAI-convention spans that never hold content.

autogen-core's own tracing names and attributes its spans after the GenAI conventions, so `genai`
reads the calls, their ids, statuses and the agents. What AutoGen does its own way:

- Every span carries `gen_ai.system=autogen` (the family's marker).
- `create_agent <name>` (operation `create_agent`) wraps each agent object's constructor, outside
  any run: it is not an agent run (`genai.is_agent_span` says so for every framework).
- `execute_tool <name>` records the tool's name, description and call id, never its arguments or
  result, whatever is configured: AutoGen has no switch for content. The arguments exist in the
  trace only on the model-request spans of an instrumented model client (e.g.
  opentelemetry-instrumentation-openai-v2 with content capture), in the issuing response's
  `gen_ai.output.messages`; AutoGen itself records no model span.
- A tool that raises is the span's exception (status ERROR, `error.type`, `exception` events); the
  workbench hands the model the error text as the result. AutoGen has no retry signal, so a failed
  call is `raised` even if a later version records that result on the span.
"""

from __future__ import annotations

from pydantic_evals.otel.span_tree import SpanNode

from . import genai
from .family import Arguments, FailureStage, Family

SYSTEM = 'gen_ai.system'
"""autogen-core 0.7.5 writes the system under the older key; `gen_ai.provider.name` is read too."""
AUTOGEN = 'autogen'
NO_ARGUMENTS = (
    "not recorded: AutoGen's tool spans never hold arguments (there is no switch for it); only an "
    "instrumented model client's request spans record them, with message content capture on."
)
"""Why an AutoGen call has no arguments, phrased to follow "arguments"."""


def is_autogen(node: SpanNode) -> bool:
    attributes = node.attributes
    return attributes.get(SYSTEM) == AUTOGEN or attributes.get(genai.PROVIDER_NAME) == AUTOGEN


def is_autogen_tool(node: SpanNode) -> bool:
    return genai.TOOL_NAME in node.attributes and is_autogen(node)


class AutoGen(Family):
    name = 'autogen'

    def recognises(self, node: SpanNode) -> bool:
        return is_autogen(node)

    def arguments(self, node: SpanNode) -> Arguments | None:
        if genai.TOOL_CALL_ARGUMENTS in node.attributes or not is_autogen_tool(node):
            return None  # recorded after all (a later version): the conventions' reader has them
        return Arguments(None, None, NO_ARGUMENTS)

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        return 'raised' if is_autogen_tool(node) else None


FAMILY = AutoGen()
