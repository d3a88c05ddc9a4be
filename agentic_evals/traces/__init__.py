"""Trace files: load OTLP (JSON lines, JSON, protobuf) and Jaeger JSON as pydantic-evals `SpanTree`s; save OTLP JSON.

    for trace in load_traces('runs/'):
        print(trace.name, extract_trajectory(trace.tree).tool_calls)

The format is detected from the content (gzip included), not the name. `load_traces` streams:
it yields each trace as soon as its last span is read, so memory grows with the largest trace,
not with the file. Unusable input raises `TraceFileError` naming the file and line (or byte
offset); recoverable problems are kept as `LoadedTrace.warnings`.
"""

from ._assemble import LoadedTrace
from ._errors import TraceFileError
from ._load import load_traces, read_traces
from ._writer import OtlpJsonFileExporter, write_otlp_json

__all__ = (
    'LoadedTrace',
    'OtlpJsonFileExporter',
    'TraceFileError',
    'load_traces',
    'read_traces',
    'write_otlp_json',
)
