"""Trace files: load OTLP and Jaeger traces as pydantic-evals `SpanTree`s, save captured spans as OTLP JSON.

    for trace in load_traces('runs/', 'ci/*.jsonl.gz'):
        print(trace.name, trace.warnings, extract_trajectory(trace.tree).tool_calls)

    write_otlp_json(captured.spans, 'run1.jsonl')  # or OtlpJsonFileExporter in any SDK pipeline

Formats, detected from the content (not the name), each also gzipped: OTLP JSON lines as the
Collector's `file` exporter writes them (one `ExportTraceServiceRequest` per line), a single
(pretty-printed) OTLP JSON document, binary OTLP protobuf, and Jaeger JSON (`{"data": [...]}`).

Decoding: attribute values of every OTLP type are kept (bytes as base64 text; arrays of one scalar
type as tuples; other arrays and kvlists as compact JSON text); status codes become
'ok'/'error'/'unset'. `SpanNode` has no events, so the first `exception` event's
`exception.type` and `exception.message` are copied onto its span's attributes (unless the span
has its own): pydantic-evals' `SpanNode.from_readable_span` drops events altogether. Resources,
scopes, span kinds, links and status messages have no place in a `SpanNode` and are dropped.

Streaming: `load_traces` yields each trace as soon as the last line holding its spans is read,
so memory grows with the largest trace (plus a small index entry per trace id), not with the
file; spans of one trace spread over lines or files are merged. Protobuf files and single JSON
documents have no lines and are read whole.

Errors: unusable input raises `FileError` naming the file and line (or byte offset).
Recoverable problems are recovered from and listed in `LoadedTrace.warnings`: a duplicate span id
(the first span is kept), a span whose parent is missing (it becomes a root), a child starting
before its parent (kept), an attribute of an unknown or invalid value type (skipped), a span
without an end time (it ends when it starts).
"""

# The package's interface to the layers above it (re-exported explicitly; the public names are
# exported from `agentic_evals`).
from ._assemble import LoadedTrace as LoadedTrace
from ._load import load_traces as load_traces
from ._load import read_traces as read_traces
from ._writer import OtlpJsonFileExporter as OtlpJsonFileExporter
from ._writer import write_otlp_json as write_otlp_json
