"""Pydantic AI's own span names and attributes, by instrumentation version.

Copied as constants rather than imported: pydantic-ai's instrumentation module is private and
changes between releases, and traces from old versions must keep scoring after an upgrade.
"""

from __future__ import annotations

# Instrumentation version <= 2 names (version 1 existed only in pydantic-ai 1.x).
V2_TOOL_SPAN = 'running tool'
V2_OUTPUT_FUNCTION_SPAN = 'running output function'
V2_AGENT_SPAN = 'agent run'
V2_AGENT_NAME = 'agent_name'
V2_TOOL_ARGUMENTS = 'tool_arguments'
V2_TOOL_RESULT = 'tool_response'
# pydantic-ai before 1.68 grouped one response's tool spans under this span; it is not a call.
RUNNING_TOOLS_SPAN = 'running tools'

# `logfire.msg` is set on every version; it is the only marker of a version 3+ output function.
LOGFIRE_MSG = 'logfire.msg'
OUTPUT_FUNCTION_MSG_PREFIX = 'running output function:'
INVALID_TOOL_CALL_MSG_PREFIX = 'invalid tool call:'

# Present on a tool span whose call raised `ApprovalRequired` / `CallDeferred` instead of running.
DEFERRAL_NAME = 'pydantic_ai.tool.deferral.name'
# 2.27.1+: arguments failed validation (`'validation'`); the span is separate from execution.
FAILURE_STAGE = 'pydantic_ai.tool.failure_stage'
# 2.60+: why a retry was requested: `'model_retry'` or `'validation_error'`.
RETRY_CAUSE = 'pydantic_ai.tool.retry.cause'
# The exception type pydantic-ai records when a tool raised `ModelRetry`.
TOOL_RETRY_EXCEPTION = 'ToolRetryError'

# 2.x records arguments that were not valid JSON as `{"INVALID_JSON": "<the model's text>"}`.
INVALID_JSON_KEY = 'INVALID_JSON'

COST = 'operation.cost'
