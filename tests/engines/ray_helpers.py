"""What the Ray engine's tests share: traces split over many files and lines, and a trace's comparable form."""

from __future__ import annotations

import base64
import gzip
import json
import os
import random
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from pydantic_evals.evaluators import Evaluator, EvaluatorContext

from agentic_evals import LoadedTrace

REPO = Path(__file__).resolve().parent.parent.parent
FIXTURES = REPO / 'fixtures'
SOURCES = (
    'support/baseline.otlp.jsonl',
    'scenario/v5.otlp.jsonl',
    'scenario/v6.otlp.jsonl',
    'conversations/chats.otlp.jsonl',
)


def _spans() -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(resource, scope, span) of every span in a few fixtures, each trace id made unique per fixture."""
    found = []
    for number, name in enumerate(SOURCES):
        for line in (FIXTURES / name).read_text().splitlines():
            for resource_spans in json.loads(line)['resourceSpans']:
                for scope_spans in resource_spans['scopeSpans']:
                    for span in scope_spans['spans']:
                        span = dict(span, traceId=f'{number:02x}{span["traceId"][2:]}')
                        found.append((resource_spans['resource'], scope_spans['scope'], span))
    return found


def _request(group: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    return {
        'resourceSpans': [
            {'resource': resource, 'scopeSpans': [{'scope': scope, 'spans': [span]}]} for resource, scope, span in group
        ]
    }


def _as_protobuf_json(request: dict[str, Any]) -> dict[str, Any]:
    """The request with its ids in base64, as the protobuf JSON mapping spells bytes (OTLP JSON writes hex)."""
    for resource_spans in request['resourceSpans']:
        for scope_spans in resource_spans['scopeSpans']:
            for span in scope_spans['spans']:
                for key in ('traceId', 'spanId', 'parentSpanId'):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return request


def write_split(directory: Path, *, files: int = 6, seed: int = 7) -> list[Path]:
    """The fixtures' spans shuffled over `files` files, a few spans a line, as a Collector's batches and rotation write them.

    Files alternate between JSON lines, gzipped JSON lines and OTLP protobuf, so a trace is split
    over lines, files and formats at once.
    """
    spans = _spans()
    random.Random(seed).shuffle(spans)
    chunks: list[list[Any]] = [[] for _ in range(files)]
    for index, item in enumerate(spans):
        chunks[index * files // len(spans)].append(item)
    written = []
    for number, chunk in enumerate(chunks):
        lines = [chunk[start : start + 3] for start in range(0, len(chunk), 3)]
        kind = number % 3
        if kind == 2:
            request = ExportTraceServiceRequest()
            json_format.ParseDict(_as_protobuf_json(_request(chunk)), request)
            path = directory / f'part-{number:02d}.otlp.pb'
            path.write_bytes(request.SerializeToString())
        else:
            text = ''.join(json.dumps(_request(line)) + '\n' for line in lines).encode()
            path = directory / f'part-{number:02d}.otlp.jsonl{".gz" if kind else ""}'
            path.write_bytes(gzip.compress(text) if kind else text)
        written.append(path)
    return written


def comparable(trace: LoadedTrace) -> tuple[Any, ...]:
    """Everything a loaded trace holds, in a form `==` compares (a `SpanTree` compares by identity)."""
    nodes = tuple(
        (
            node.name,
            node.span_id,
            node.parent_span_id,
            node.start_timestamp,
            node.end_timestamp,
            tuple(sorted(node.attributes.items())),
            node.status,
            tuple(child.span_id for child in node.children),
        )
        for node in trace.tree
    )
    return trace.trace_id, tuple(str(source) for source in trace.sources), trace.warnings, nodes


@dataclass(repr=False)
class KillOnce(Evaluator[object, object, object]):
    """Kills the Ray worker process it runs in (SIGKILL, no clean-up) at its `after`-th case, once.

    Only inside Ray workers (the test cluster sets AGENTIC_EVALS_TEST_KILLS in their environment);
    the marker file, created exclusively, makes it happen once across every worker and retry.
    """

    marker: str
    after: int = 1

    def evaluate(self, ctx: EvaluatorContext[object, object, object]) -> bool:
        if os.environ.get('AGENTIC_EVALS_TEST_KILLS'):
            seen = f'{self.marker}.seen'
            with open(seen, 'a') as out:
                out.write('.\n')
            if os.path.getsize(seen) >= 2 * self.after:
                try:
                    os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    return True
                os.kill(os.getpid(), signal.SIGKILL)
        return True
