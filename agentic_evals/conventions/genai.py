"""OpenTelemetry GenAI semantic conventions (development status), shared by most frameworks.

pydantic-ai (instrumentation version 3+), Google ADK and Strands name their spans and attributes
after these conventions, so they are the common vocabulary the extractor reads first.
"""

from __future__ import annotations

OPERATION_NAME = 'gen_ai.operation.name'
OPERATION_EXECUTE_TOOL = 'execute_tool'
# Operations that are one request to a model: `chat` (pydantic-ai, Strands), `generate_content`
# (Google ADK), `text_completion` (completion APIs).
MODEL_REQUEST_OPERATIONS = frozenset({'chat', 'generate_content', 'text_completion'})

TOOL_NAME = 'gen_ai.tool.name'
TOOL_CALL_ID = 'gen_ai.tool.call.id'
TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments'
TOOL_CALL_RESULT = 'gen_ai.tool.call.result'
TOOL_SPAN_PREFIX = 'execute_tool '

AGENT_NAME = 'gen_ai.agent.name'
AGENT_SPAN_PREFIX = 'invoke_agent'

REQUEST_MODEL = 'gen_ai.request.model'
RESPONSE_MODEL = 'gen_ai.response.model'
OUTPUT_MESSAGES = 'gen_ai.output.messages'

INPUT_TOKENS = 'gen_ai.usage.input_tokens'
OUTPUT_TOKENS = 'gen_ai.usage.output_tokens'
CACHE_READ_TOKENS = 'gen_ai.usage.cache_read.input_tokens'
CACHE_WRITE_TOKENS = 'gen_ai.usage.cache_creation.input_tokens'
