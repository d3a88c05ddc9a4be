"""Saving SDK spans as OTLP JSON lines and loading them back gives the tree captured in-process."""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode
from pydantic_evals.otel.span_tree import SpanNode, SpanTree

from agentic_evals import LoadedTrace, capture, read_traces, write_otlp_json
from agentic_evals.traces import OtlpJsonFileExporter

EVERY_TYPE: dict[str, Any] = {
    'str': 'caf\u00e9',
    'empty str': '',
    'bool': False,
    'int': -(2**62),
    'float': 0.1,
    'strs': ('a', 'b'),
    'bools': (True, False),
    'ints': (1, 2, 3),
    'floats': (0.5, -1.25),
    'empty': (),
}


@pytest.fixture
def provider() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=Resource.create({'service.name': 'round-trip'}))
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield tracer_provider, exporter
    tracer_provider.shutdown()


def run_agent(tracer_provider: TracerProvider, runs: int = 1) -> None:
    """Nested spans from two instrumentation scopes, attributes of every type, a failed tool with an exception."""
    agent_tracer = tracer_provider.get_tracer('pydantic-ai', '2.62.0')
    http_tracer = tracer_provider.get_tracer('httpx')
    for run in range(runs):
        with agent_tracer.start_as_current_span('invoke_agent main', attributes={'run': run, **EVERY_TYPE}):
            with agent_tracer.start_as_current_span('chat model-x', kind=SpanKind.CLIENT) as chat:
                chat.set_status(Status(StatusCode.OK))
                with http_tracer.start_as_current_span('POST', kind=SpanKind.CLIENT):
                    pass
            with agent_tracer.start_as_current_span('execute_tool get_weather', record_exception=False) as tool:
                tool.set_attribute('gen_ai.tool.name', 'get_weather')
                tool.add_event('retrying', {'attempt': 1})
                try:
                    raise ValueError('city not found')
                except ValueError as error:
                    tool.record_exception(error)
                    tool.set_status(Status(StatusCode.ERROR, 'city not found'))


def node_facts(node: SpanNode) -> tuple[Any, ...]:
    return (
        node.name,
        node.trace_id,
        node.span_id,
        node.parent_span_id,
        node.start_timestamp,
        node.end_timestamp,
        node.status,
        node.attributes,
    )


def assert_same_trees(spans: Sequence[ReadableSpan], loaded: list[LoadedTrace]) -> None:
    """Each loaded tree equals the tree pydantic-evals builds in-process, plus the folded exception."""
    expected: dict[int, SpanTree] = {}
    for span in spans:
        assert span.context is not None
        expected.setdefault(span.context.trace_id, SpanTree()).add_readable_spans([span])
    assert [int(trace.trace_id, 16) for trace in loaded] == list(expected)
    for trace in loaded:
        want = []
        for node in expected[int(trace.trace_id, 16)]:
            if node.status == 'error':
                node.attributes = {
                    **node.attributes,
                    'exception.type': 'ValueError',
                    'exception.message': 'city not found',
                }
            want.append(node_facts(node))
        assert [node_facts(node) for node in trace.tree] == want
        assert trace.tree.repr_xml(include_span_id=True) == expected[int(trace.trace_id, 16)].repr_xml(
            include_span_id=True
        )
        assert trace.warnings == ()


@pytest.mark.parametrize('name', ['spans.jsonl', 'spans.jsonl.gz'])
def test_round_trip(name: str, provider: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path) -> None:
    tracer_provider, exporter = provider
    run_agent(tracer_provider, runs=3)
    spans = exporter.get_finished_spans()
    path = tmp_path / name

    assert write_otlp_json(spans, path) == 12

    assert_same_trees(spans, read_traces(path))
    lines = (gzip.decompress(path.read_bytes()) if name.endswith('.gz') else path.read_bytes()).splitlines()
    assert len(lines) == 3  # one request per trace


def test_written_lines_follow_the_otlp_json_mapping(
    provider: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path
) -> None:
    tracer_provider, exporter = provider
    run_agent(tracer_provider)
    path = tmp_path / 'spans.jsonl'
    write_otlp_json(exporter.get_finished_spans(), path)

    [line] = path.read_text().splitlines()
    document = json.loads(line)
    [resource_spans] = document['resourceSpans']
    assert {'key': 'service.name', 'value': {'stringValue': 'round-trip'}} in resource_spans['resource']['attributes']
    scopes = [(scope_spans['scope'], len(scope_spans['spans'])) for scope_spans in resource_spans['scopeSpans']]
    assert scopes == [({'name': 'httpx'}, 1), ({'name': 'pydantic-ai', 'version': '2.62.0'}, 3)]
    tool = resource_spans['scopeSpans'][1]['spans'][1]
    assert tool['name'] == 'execute_tool get_weather'
    assert tool['kind'] == 1
    assert tool['status'] == {'code': 2, 'message': 'city not found'}
    assert [event['name'] for event in tool['events']] == ['retrying', 'exception']
    assert isinstance(tool['startTimeUnixNano'], str)
    root = resource_spans['scopeSpans'][1]['spans'][2]
    assert 'parentSpanId' not in root
    values = {attribute['key']: attribute['value'] for attribute in root['attributes']}
    assert values['int'] == {'intValue': str(-(2**62))}
    assert values['ints'] == {'arrayValue': {'values': [{'intValue': '1'}, {'intValue': '2'}, {'intValue': '3'}]}}
    assert values['empty'] == {'arrayValue': {'values': []}}


def test_append(provider: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path) -> None:
    tracer_provider, exporter = provider
    run_agent(tracer_provider, runs=2)
    spans = exporter.get_finished_spans()
    path = tmp_path / 'spans.jsonl.gz'

    write_otlp_json(spans[:5], path)
    write_otlp_json(spans[5:], path, append=True)  # the second trace's spans are split over both writes

    assert_same_trees(spans, read_traces(path))


@pytest.mark.parametrize('suffix', ['.jsonl', '.jsonl.gz'])
def test_lone_surrogates_are_written_and_read_back(
    suffix: str, provider: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path
) -> None:
    tracer_provider, exporter = provider
    attributes = {'text': 'a\udcffb é', 'key \ud801': 1}
    with tracer_provider.get_tracer('t').start_as_current_span('span \ud800', attributes=attributes):
        pass
    path = tmp_path / f'spans{suffix}'

    assert write_otlp_json(exporter.get_finished_spans(), path) == 1

    (node,) = read_traces(path)[0].tree
    assert (node.name, node.attributes) == ('span \ud800', attributes)


def test_exporter_in_a_simple_span_processor(tmp_path: Path) -> None:
    path = tmp_path / 'exported.jsonl'
    path.write_text('stale content\n')
    memory = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))

    run_agent(tracer_provider, runs=2)
    tracer_provider.shutdown()

    assert len(path.read_text().splitlines()) == 8  # a line per span, as each span is exported alone
    assert_same_trees(memory.get_finished_spans(), read_traces(path))


def test_exporter_in_a_batch_span_processor(tmp_path: Path) -> None:
    path = tmp_path / 'exported.jsonl.gz'
    memory = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer_provider.add_span_processor(BatchSpanProcessor(OtlpJsonFileExporter(path), max_export_batch_size=3))

    run_agent(tracer_provider, runs=4)
    tracer_provider.shutdown()

    assert_same_trees(memory.get_finished_spans(), read_traces(path))


def test_capture_spans_round_trip(provider: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path) -> None:
    tracer_provider, _ = provider
    with capture(tracer_provider) as captured:
        run_agent(tracer_provider)
    path = tmp_path / 'captured.jsonl'

    write_otlp_json(captured.spans, path)

    loaded = read_traces(path)
    assert_same_trees(captured.spans, loaded)
    assert loaded[0].tree.repr_xml(include_span_id=True) == captured.tree.repr_xml(include_span_id=True)


def test_exporter_never_raises(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    memory = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(memory))
    run_agent(tracer_provider)
    spans = memory.get_finished_spans()

    broken = OtlpJsonFileExporter(tmp_path / 'no-such-dir' / 'x.jsonl', append=True)
    with caplog.at_level(logging.ERROR):
        assert broken.export(spans) is SpanExportResult.FAILURE
    assert 'could not write 4 spans to' in caplog.text

    closed = OtlpJsonFileExporter(tmp_path / 'x.jsonl')
    closed.shutdown()
    assert closed.export(spans) is SpanExportResult.FAILURE
    assert closed.force_flush() is True


def test_protobuf_from_the_sdk_encoder_loads_like_json(
    provider: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path
) -> None:
    trace_encoder = pytest.importorskip('opentelemetry.exporter.otlp.proto.common.trace_encoder')
    tracer_provider, exporter = provider
    run_agent(tracer_provider, runs=2)
    spans = exporter.get_finished_spans()
    binary = tmp_path / 'spans.otlp'
    binary.write_bytes(trace_encoder.encode_spans(spans).SerializeToString())

    assert_same_trees(spans, read_traces(binary))


def _base64_ids(document: Any) -> Any:
    """The OTLP/JSON form (hex ids) in the standard protobuf JSON form (base64 ids), for `ParseDict`."""
    import base64

    if isinstance(document, dict):
        return {
            key: base64.b64encode(bytes.fromhex(value)).decode()
            if key in ('traceId', 'spanId', 'parentSpanId') and isinstance(value, str)
            else _base64_ids(value)
            for key, value in document.items()
        }
    if isinstance(document, list):
        return [_base64_ids(item) for item in document]
    return document


def test_every_field_opentelemetrys_encoder_writes_is_written(tmp_path: Path) -> None:
    """The writer's request, read as protobuf, equals `opentelemetry.exporter.otlp.proto.common`'s `encode_spans`."""
    from google.protobuf import json_format  # type: ignore[import-untyped]
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.sdk.trace import SpanLimits
    from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, TraceFlags, TraceState, set_span_in_context

    exporter = InMemorySpanExporter()
    limits = SpanLimits(
        max_span_attributes=12, max_events=2, max_links=1, max_event_attributes=1, max_link_attributes=1
    )
    tracer_provider = TracerProvider(
        resource=Resource.create({'service.name': 'fields', 'deployment': 'ci'}, schema_url='https://schema/r'),
        span_limits=limits,
    )
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = tracer_provider.get_tracer('agent', '1.2.3', schema_url='https://schema/s', attributes={'scope.attr': 7})
    other = tracer_provider.get_tracer('http')
    remote = SpanContext(
        0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(1), trace_state=TraceState([('vendor', 'x1')])
    )
    linked = SpanContext(0x123, 0x456, is_remote=True)
    with tracer.start_as_current_span(
        'root',
        context=set_span_in_context(NonRecordingSpan(remote)),
        kind=SpanKind.SERVER,
        attributes={**EVERY_TYPE, 'with none': ('a', None), 'extra 1': 1, 'extra 2': 2, 'extra 3': 3},
        links=[Link(linked), Link(linked, {'why': 'retry', 'dropped': 1})],
    ) as root:
        root.add_event('first', timestamp=1_700_000_000_000_000_001)
        root.add_event('second', {'a': 1, 'b': 2})
        root.add_event('third')
        root.set_status(Status(StatusCode.ERROR, 'it broke'))
        with other.start_as_current_span('child', kind=SpanKind.CLIENT) as child:
            child.set_status(Status(StatusCode.OK))
    spans = exporter.get_finished_spans()
    tracer_provider.shutdown()

    write_otlp_json(spans, tmp_path / 'spans.jsonl')
    [line] = (tmp_path / 'spans.jsonl').read_text().splitlines()
    ours = json_format.ParseDict(_base64_ids(json.loads(line)), ExportTraceServiceRequest())
    theirs = encode_spans(spans)

    mine, expected = json_format.MessageToDict(ours), json_format.MessageToDict(theirs)
    scopes = [scope for resource in expected['resourceSpans'] for scope in resource['scopeSpans']]
    if not any('schemaUrl' in scope for scope in scopes):
        # The oldest OpenTelemetry we support (1.30) encodes less: no scope schema URL or attributes,
        # and it drops arrays holding None. The writer follows the current encoder, checked there.
        pytest.skip('this OpenTelemetry encoder predates scope schema URLs; compared on the latest release')
    assert mine == expected
    [root_span] = [span for scope in ours.resource_spans[0].scope_spans for span in scope.spans if span.name == 'root']
    assert (root_span.flags, root_span.trace_state, root_span.dropped_events_count, root_span.dropped_links_count) == (
        0x300,
        'vendor=x1',
        1,
        1,
    )
    assert root_span.dropped_attributes_count > 0
    assert [(event.name, event.dropped_attributes_count) for event in root_span.events] == [('second', 1), ('third', 0)]
    assert root_span.links[0].flags == 0x300 and root_span.links[0].dropped_attributes_count == 1
