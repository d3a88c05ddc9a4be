"""Span conventions: which spans are tool calls, model requests and agents, per instrumentation family.

Each module holds the span names and attribute keys of one family as named constants, plus small
predicates over a `SpanNode`. Nothing here builds records; `agentic_evals.trajectory` does that.
"""
