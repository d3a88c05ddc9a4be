"""Span conventions: the only code that knows span names and attribute keys.

One module per instrumentation family (`genai`, `pydantic_ai`, `google_adk`) defines its names and
keys as constants and a `Family` (see `family`) that classifies its spans and reads them; `registry`
lists the families in the order they are asked. `otel` and `pydantic_evals` hold the keys the trace
readers and dataset matching use. Nothing here builds records: `agentic_evals.trajectory` does.
"""
