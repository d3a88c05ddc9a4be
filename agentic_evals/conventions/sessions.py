"""Where a trace records the conversation (session, thread) it is a turn of.

Each turn of a chat is usually its own trace; what ties the turns together is an id the app or
the framework puts on the spans. Copied from each framework rather than imported:

- `gen_ai.conversation.id` (OpenTelemetry GenAI conventions): pydantic-ai puts it on every span of
  a run (the `conversation_id` of `Agent.run`, inherited from `message_history`, else a fresh id
  per run), Google ADK on its agent spans (the session id);
- `session.id` (OpenInference's `using_session`; its LangChain instrumentor maps the run
  metadata's `session_id`, `conversation_id` or `thread_id` to it; Strands documents it for
  `trace_attributes`);
- `gcp.vertex.agent.session_id`: Google ADK's span schema 1;
- `langsmith.metadata.session_id`, `.thread_id`, `.conversation_id`: the metadata keys LangSmith
  groups threads by, as its OpenTelemetry mode writes them (LangGraph puts the `thread_id` of its
  config there). `langsmith.trace.session_id` is the LangSmith project, not a conversation;
- `group_id`: the OpenAI Agents SDK's trace group ("a chat thread ID"), as logfire records it on
  the SDK trace's span, read only on a span that also carries logfire's `agent_trace_id` (the
  name alone is too common to mean a conversation); logfire writes `null` there when the trace has
  no group.
"""

from __future__ import annotations

from pydantic_evals.otel.span_tree import SpanNode, SpanTree

GENAI_CONVERSATION_ID = 'gen_ai.conversation.id'
OPENINFERENCE_SESSION_ID = 'session.id'
ADK_SESSION_ID = 'gcp.vertex.agent.session_id'
LANGSMITH_THREAD_KEYS = (
    'langsmith.metadata.session_id',
    'langsmith.metadata.thread_id',
    'langsmith.metadata.conversation_id',
)
OPENAI_AGENTS_GROUP_ID = 'group_id'
LOGFIRE_AGENT_TRACE_ID = 'agent_trace_id'
"""On logfire's span for an OpenAI Agents SDK trace, beside `group_id`."""
LOGFIRE_NULL = 'null'
"""What logfire writes for an argument that was `None` (its values are JSON)."""

CONVERSATION_ID_KEYS = (GENAI_CONVERSATION_ID, OPENINFERENCE_SESSION_ID, ADK_SESSION_ID, *LANGSMITH_THREAD_KEYS)
"""The keys that name a conversation on any span, in the order they are asked."""


def span_conversation_id(node: SpanNode) -> str | None:
    """The conversation id `node` records itself (an empty value is none: pydantic-ai writes `''`)."""
    attributes = node.attributes
    for key in CONVERSATION_ID_KEYS:
        value = attributes.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    group = attributes.get(OPENAI_AGENTS_GROUP_ID)
    if isinstance(group, str) and group not in ('', LOGFIRE_NULL) and LOGFIRE_AGENT_TRACE_ID in attributes:
        return group
    return None


def conversation_id(tree_or_node: SpanTree | SpanNode) -> str | None:
    """The conversation a trace (or the spans under `node`) belongs to, or `None` when none is recorded.

    The shallowest span that records one decides (earliest first among spans of one depth): a
    sub-agent run inside a turn may start a conversation of its own (ADK gives it its own
    session, pydantic-ai a fresh id), and the turn's own run sits above it.
    """
    level = list(tree_or_node.roots) if isinstance(tree_or_node, SpanTree) else [tree_or_node]
    while level:
        level.sort(key=lambda n: n.start_timestamp)
        for node in level:
            found = span_conversation_id(node)
            if found is not None:
                return found
        level = [child for node in level for child in node.children]
    return None
