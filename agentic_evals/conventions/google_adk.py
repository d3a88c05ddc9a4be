"""Google ADK's span conventions that differ from the OpenTelemetry GenAI ones (ADK 2.x)."""

from __future__ import annotations

# After parallel calls ADK emits a synthetic `execute_tool (merged)` span with this tool name,
# summarising the calls that have spans of their own: it is not a call.
MERGED_TOOLS_NAME = '(merged tools)'
