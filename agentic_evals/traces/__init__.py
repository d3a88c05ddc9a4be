"""Trace files: load OTLP and Jaeger traces as pydantic-evals `SpanTree`s, save captured spans as OTLP JSON.

    for trace in load_traces('runs/', 'ci/*.jsonl.gz'):
        print(trace.name, trace.warnings, extract_trajectory(trace.tree).tool_calls)

    write_otlp_json(captured.spans, 'run1.jsonl')  # or OtlpJsonFileExporter in any SDK pipeline

Formats, detected from the content (not the name), each also gzipped: OTLP JSON lines as the
Collector's `file` exporter writes them (one `ExportTraceServiceRequest` per line), a single
(pretty-printed) OTLP JSON document, Grafana Tempo's trace export (`{"batches": [...]}`, ids in
base64 as the protobuf JSON mapping writes them), binary OTLP protobuf, and Jaeger JSON
(`{"data": [...]}`).

Decoding: attribute values of every OTLP type are kept (bytes as base64 text; arrays of one scalar
type as tuples; other arrays and kvlists as compact JSON text); status codes become
'ok'/'error'/'unset'. `SpanNode` has no events, so the first `exception` event's
`exception.type` and `exception.message` are copied onto its span's attributes (unless the span
has its own): pydantic-evals' `SpanNode.from_readable_span` drops events altogether. Resources,
scopes, span kinds, links and status messages have no place in a `SpanNode` and are dropped.

Streaming: `load_traces` yields each trace as soon as the last line holding its spans is read,
so memory grows with the largest trace (plus a small index entry per trace id), not with the
file; spans of one trace spread over lines or files are merged. A protobuf file is read one
`ResourceSpans` at a time (a trace is yielded once the last one holding its spans is read);
single JSON documents have no lines and are read whole. Memory is bounded by the size of one
unit: a line may hold at most 64 MiB, and a JSON document or one protobuf `ResourceSpans` 64 MiB
after decompression (`_readers.MAX_LINE`, `MAX_DOCUMENT`), so a small gzip file that expands to
gigabytes is refused at the limit; an attribute value is never larger than the unit holding it.

Errors: unusable input raises `FileError` naming the file and the line (JSON) or byte offset
(protobuf, gzip) and what is wrong, on one line; in a JSON document, the line where the bad
span (or value) starts. What a span cannot be placed without is an error: its trace and span ids,
its start time, a container (`resourceSpans`, `spans`, a span...) of the wrong JSON type, JSON
nested deeper than the parser goes, a key repeated in one object whose first value held spans.

Warnings: everything else is recovered from and listed in `LoadedTrace.warnings`, each naming the
file and line: a duplicate span id (the first span is kept), a span whose parent is missing (it
becomes a root), a parent cycle (its earliest span becomes a root), a child starting before its
parent (kept), a name that is not a string (kept as its JSON text), an attribute of an unknown,
invalid or wrong-typed value (skipped), an unusable status (unset) or events (skipped), a span
without a usable end time (it ends when it starts), spans under a key no format has (a misspelt
`scopeSpan`: not read, counted). Warnings no loaded trace can carry go to the `on_warning`
callback of `load_traces` (or, without one, the `agentic_evals.traces` logger): a file found by
walking a directory or glob that is no trace file (skipped: notes, a `package.json`, a report), a
symbolic link loop (skipped), a trace none of whose spans could be read, an unknown protobuf field.
"""

# The package's interface to the layers above it (re-exported explicitly; the public names are
# exported from `agentic_evals`).
from ._assemble import LoadedTrace as LoadedTrace
from ._load import load_traces as load_traces
from ._load import read_traces as read_traces
from ._writer import OtlpJsonFileExporter as OtlpJsonFileExporter
from ._writer import write_otlp_json as write_otlp_json
