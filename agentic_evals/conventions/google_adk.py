"""Google ADK's span conventions that differ from the OpenTelemetry GenAI ones (ADK 2.x)."""

from __future__ import annotations

from . import genai
from .family import Family, ToolSpans

# After parallel calls ADK emits a synthetic `execute_tool (merged)` span with this tool name,
# summarising the calls that have spans of their own: it is not a call.
MERGED_TOOLS_NAME = '(merged tools)'


class GoogleADK(Family):
    """ADK 2.x follows the GenAI conventions; only its merged-tools summary spans need saying so far."""

    name = 'google-adk'
    tool_spans = ToolSpans(genai.TOOL_NAME, not_calls=frozenset({MERGED_TOOLS_NAME}))


FAMILY = GoogleADK()
