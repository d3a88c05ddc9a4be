"""Google ADK's span conventions that differ from the OpenTelemetry GenAI ones (ADK 2.x)."""

from __future__ import annotations

from pydantic_evals.otel.span_tree import SpanNode

from . import genai
from .family import IGNORED, Answer

# After parallel calls ADK emits a synthetic `execute_tool (merged)` span with this tool name,
# summarising the calls that have spans of their own: it is not a call.
MERGED_TOOLS_NAME = '(merged tools)'


class GoogleADK(genai.GenAI):
    """ADK 2.x follows the GenAI conventions; only its merged-tools summary spans need saying so far."""

    name = 'google-adk'

    def classify_tool(self, node: SpanNode, notes: list[str]) -> Answer:
        return IGNORED if node.attributes[genai.TOOL_NAME] == MERGED_TOOLS_NAME else None


FAMILY = GoogleADK()
