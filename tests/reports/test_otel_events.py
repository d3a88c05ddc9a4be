"""Evaluation results as `gen_ai.evaluation.result` log events: over real OTLP receivers, and as OTLP JSON lines.

The report comes from the real pipeline (`run` on the bundled support-agent traces); the events are
sent through the Logs SDK and the OTLP exporters to receivers on the loopback interface, which
decode them with opentelemetry-proto. Attribute keys are written out here, not taken from
`conventions/`, so a misspelt constant fails.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict, ParseDict
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.sdk.trace import TracerProvider
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext

from agentic_evals import evaluate_traces_sync, read_traces
from agentic_evals.cli import main
from agentic_evals.errors import AgenticEvalsError, FileError
from agentic_evals.reports.document import (
    AssertionResult,
    CaseResult,
    EvaluatorError,
    LabelResult,
    ReportDocument,
    ScoreResult,
    document_from_report,
    read_document,
)
from agentic_evals.reports.events import evaluation_events
from agentic_evals.views.otlp_export import (
    emit_otlp,
    export_timeout,
    otlp_protocol,
    render_otlp_json_lines,
    write_otlp_json_lines,
)

from .otlp_receiver import GrpcReceiver, HttpReceiver, free_port

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / 'fixtures' / 'support' / 'dataset.yaml'
TRACES = ROOT / 'fixtures' / 'support' / 'regressed.otlp.jsonl'
EVENT = 'gen_ai.evaluation.result'
NOW = 1_700_000_000_123_456_789
HAS_EVENT_NAME_FIELD = 'event_name' in LogRecord.DESCRIPTOR.fields_by_name
"""opentelemetry-proto 1.30 has no `event_name` field; there the `event.name` attribute carries it."""
SHORT = 1.0
"""The export budget of the failure tests (seconds)."""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exporters read OTEL_* variables: none from the machine running the tests."""
    for name in list(os.environ):
        if name.startswith('OTEL_'):
            monkeypatch.delenv(name)


@pytest.fixture(scope='module')
def report(tmp_path_factory: pytest.TempPathFactory) -> ReportDocument:
    """`run` on the regressed support traces: scores, passing and failing assertions, trace and span ids."""
    out = tmp_path_factory.mktemp('otel-events') / 'report.json'
    assert main(['run', str(DATASET), str(TRACES), '--json', str(out)]) == 1  # the regressed set fails a gate
    return read_document(out)


@dataclass(repr=False)
class Unavailable(Evaluator[object, object, object]):
    def evaluate(self, ctx: EvaluatorContext[object, object, object]) -> bool:
        raise RuntimeError('judge backend unavailable')


@dataclass(repr=False)
class Risk(Evaluator[object, object, object]):
    def evaluate(self, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return EvaluationReason(value='risky', reason='a tool raised')


@pytest.fixture(scope='module')
def labelled() -> ReportDocument:
    """A real report with a label and an evaluator that raised."""
    report = evaluate_traces_sync(read_traces(TRACES), evaluators=[Risk(), Unavailable()], name='labelled')
    return document_from_report(report)


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpReceiver]:
    with HttpReceiver() as r:
        monkeypatch.setenv('OTEL_EXPORTER_OTLP_ENDPOINT', r.endpoint)
        yield r


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def otel(self) -> list[str]:
        return [f'{r.name}: {r.getMessage()}' for r in self.records if r.name.startswith('opentelemetry')]


@pytest.fixture
def root_records() -> Iterator[Records]:
    """What reaches the root logger's handlers, where an application's logging (or Python's last resort) prints."""
    handler = Records()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def attributes(record: LogRecord) -> dict[str, Any]:
    return {kv.key: plain(kv.value) for kv in record.attributes}


def plain(value: AnyValue) -> Any:
    kind = value.WhichOneof('value')
    return int(value.int_value) if kind == 'int_value' else getattr(value, kind)


def records(requests: list[ExportLogsServiceRequest]) -> list[LogRecord]:
    return [r for request in requests for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]


def record_for(requests: list[ExportLogsServiceRequest], case: str, name: str) -> LogRecord:
    [found] = [
        r
        for r in records(requests)
        if attributes(r)['agentic_evals_otel.case'] == case and attributes(r)['gen_ai.evaluation.name'] == name
    ]
    return found


def result_count(document: ReportDocument) -> int:
    return sum(len(c.scores) + len(c.assertions) + len(c.labels) + len(c.evaluator_errors) for c in document.cases)


def as_json(request: ExportLogsServiceRequest) -> dict[str, Any]:
    """A decoded request in OTLP/JSON: protobuf's JSON mapping with the ids in hex, as OTLP/JSON wants them.

    SDK 1.4x sends an empty `body` (an `AnyValue` with nothing set), which OTLP reads as no body.
    """
    data = MessageToDict(request, use_integers_for_enums=True)
    for rl in data['resourceLogs']:
        for sl in rl['scopeLogs']:
            for record in sl['logRecords']:
                if record.get('body') == {}:
                    del record['body']
                for key in ('traceId', 'spanId'):
                    if key in record:
                        record[key] = base64.b64decode(record[key]).hex()
    return data


def without_empty_bodies(request: ExportLogsServiceRequest) -> ExportLogsServiceRequest:
    copy = ExportLogsServiceRequest()
    copy.CopyFrom(request)
    for record in records([copy]):
        if record.HasField('body') and record.body.WhichOneof('value') is None:
            record.ClearField('body')
    return copy


def from_json(line: str) -> ExportLogsServiceRequest:
    """One line of the file back into a request: hex ids to protobuf JSON's base64, then `ParseDict`."""
    data = json.loads(line)
    for rl in data['resourceLogs']:
        for sl in rl['scopeLogs']:
            for record in sl['logRecords']:
                for key in ('traceId', 'spanId'):
                    if key in record:
                        record[key] = base64.b64encode(bytes.fromhex(record[key])).decode()
    return ParseDict(data, ExportLogsServiceRequest())


# --- the events -----------------------------------------------------------------------------------


def test_one_event_per_result(report: ReportDocument) -> None:
    events = evaluation_events(report)
    assert len(events) == result_count(report) == 17
    assert [(e.attributes['agentic_evals_otel.case'], e.attributes['gen_ai.evaluation.name']) for e in events[:5]] == [
        ('refund', 'support_trajectory'),
        ('refund', 'ArgumentCorrectness'),
        ('refund', 'MaxModelRequests'),
        ('refund', 'MaxToolCalls'),
        ('refund', 'billing_tools'),
    ]
    assert {e.name for e in events} == {EVENT}


def test_labels_and_evaluator_errors(labelled: ReportDocument) -> None:
    events = evaluation_events(labelled)
    assert len(events) == 2 * len(labelled.cases) == 8
    label, error = events[:2]
    case = labelled.cases[0]
    assert label.attributes == {
        'event.name': EVENT,
        'gen_ai.evaluation.name': 'Risk',
        'gen_ai.evaluation.score.label': 'risky',
        'gen_ai.evaluation.explanation': 'a tool raised',
        'agentic_evals_otel.dataset': 'labelled',
        'agentic_evals_otel.case': case.name,
        'agentic_evals_otel.evaluator': 'Risk',
        'agentic_evals_otel.result.kind': 'label',
    }
    assert error.attributes == {
        'event.name': EVENT,
        'gen_ai.evaluation.name': 'Unavailable',
        'gen_ai.evaluation.explanation': 'RuntimeError: judge backend unavailable',
        'error.type': 'RuntimeError',
        'agentic_evals_otel.dataset': 'labelled',
        'agentic_evals_otel.case': case.name,
        'agentic_evals_otel.evaluator': 'Unavailable',
        'agentic_evals_otel.result.kind': 'evaluator_error',
    }
    assert (label.severity.name, error.severity.name) == ('INFO', 'ERROR')


def hand_built(trace_id: str | None = None, span_id: str | None = None) -> ReportDocument:
    case = CaseResult(
        name='c',
        scores={'nan_score': ScoreResult(None, 'the evaluator returned NaN', 'Judge')},
        assertions={'ok': AssertionResult(True)},
        labels={'risk': LabelResult('low')},
        evaluator_errors=[EvaluatorError('broken', 'the model did not answer', None)],
        trace_id=trace_id,
        span_id=span_id,
    )
    return ReportDocument(name='hand', cases=[case])


def test_what_a_result_without_a_value_or_reason_leaves_out() -> None:
    score, assertion, label, error = evaluation_events(hand_built())
    assert 'gen_ai.evaluation.score.value' not in score.attributes  # a null (non-finite) score
    assert 'gen_ai.evaluation.score.label' not in score.attributes
    assert 'gen_ai.evaluation.explanation' not in assertion.attributes  # no reason
    assert (
        assertion.attributes['gen_ai.evaluation.score.value'],
        assertion.attributes['gen_ai.evaluation.score.label'],
    ) == (1.0, 'pass')
    assert 'gen_ai.evaluation.score.value' not in label.attributes
    assert 'agentic_evals_otel.evaluator' not in error.attributes  # not known
    assert error.attributes['error.type'] == '_OTHER'  # the message names no exception type


@pytest.mark.parametrize(
    ('trace_id', 'span_id', 'expected'),
    [
        (None, None, (None, None)),
        (
            'ABCDEF0123456789ABCDEF0123456789',
            '0123456789ABCDEF',
            ('abcdef0123456789abcdef0123456789', '0123456789abcdef'),
        ),
        ('abcdef0123456789abcdef0123456789', None, ('abcdef0123456789abcdef0123456789', None)),
        ('abcdef0123456789abcdef0123456789', 'nothex', ('abcdef0123456789abcdef0123456789', None)),
        ('0' * 32, '0123456789abcdef', (None, None)),  # the invalid (all-zero) trace id
        ('abc', '0123456789abcdef', (None, None)),
    ],
)
def test_trace_context_only_from_valid_ids(
    trace_id: str | None, span_id: str | None, expected: tuple[str | None, str | None]
) -> None:
    for event in evaluation_events(hand_built(trace_id, span_id)):
        assert (event.trace_id, event.span_id) == expected


# --- over OTLP/HTTP -------------------------------------------------------------------------------


def test_every_result_reaches_the_receiver_with_its_attributes(report: ReportDocument, receiver: HttpReceiver) -> None:
    assert emit_otlp(report, time_unix_nano=NOW) == []
    [request] = receiver.requests
    assert len(records(receiver.requests)) == 17
    [resource_logs] = request.resource_logs
    resource = {kv.key: plain(kv.value) for kv in resource_logs.resource.attributes}
    assert resource['service.name'] == 'agentic-evals-otel'
    assert resource['telemetry.sdk.name'] == 'opentelemetry'
    [scope_logs] = resource_logs.scope_logs
    assert scope_logs.scope.name == 'agentic_evals'

    refund = next(c for c in report.cases if c.name == 'refund')
    score = record_for(receiver.requests, 'refund', 'support_trajectory')
    assert attributes(score) == {
        'event.name': EVENT,
        'gen_ai.evaluation.name': 'support_trajectory',
        'gen_ai.evaluation.score.value': 0.8,
        'gen_ai.evaluation.explanation': refund.scores['support_trajectory'].reason,
        'agentic_evals_otel.dataset': 'support_agent',
        'agentic_evals_otel.case': 'refund',
        'agentic_evals_otel.evaluator': 'TrajectoryMatch',
        'agentic_evals_otel.result.kind': 'score',
    }
    assert 'LCS=2, precision=2/2=1.000, recall=2/3=0.667' in attributes(score)['gen_ai.evaluation.explanation']
    failed = record_for(receiver.requests, 'refund', 'ArgumentCorrectness')
    assert attributes(failed) == {
        'event.name': EVENT,
        'gen_ai.evaluation.name': 'ArgumentCorrectness',
        'gen_ai.evaluation.score.value': 0.0,
        'gen_ai.evaluation.score.label': 'fail',
        'gen_ai.evaluation.explanation': "Tool 'issue_refund' argument mismatch: key 'amount': expected 25.0, got 250.0 (agent 'billing')",
        'agentic_evals_otel.dataset': 'support_agent',
        'agentic_evals_otel.case': 'refund',
        'agentic_evals_otel.evaluator': 'ArgumentCorrectness',
        'agentic_evals_otel.result.kind': 'assertion',
    }
    passed = attributes(record_for(receiver.requests, 'refund', 'billing_tools'))
    assert (passed['gen_ai.evaluation.score.value'], passed['gen_ai.evaluation.score.label']) == (1.0, 'pass')
    assert passed['agentic_evals_otel.evaluator'] == 'ToolCorrectness'

    for record in (score, failed):
        assert refund.trace_id is not None and refund.span_id is not None
        assert record.trace_id.hex() == refund.trace_id
        assert record.span_id.hex() == refund.span_id
        assert record.flags == 1  # sampled
        assert (record.severity_number, record.severity_text) == (9, 'INFO')
        assert record.time_unix_nano == record.observed_time_unix_nano == NOW
        if HAS_EVENT_NAME_FIELD:
            assert record.event_name == EVENT
    for case in report.cases:  # every event sits on its own case's trace and agent span
        for record in records(receiver.requests):
            if attributes(record)['agentic_evals_otel.case'] == case.name:
                assert (record.trace_id.hex(), record.span_id.hex()) == (case.trace_id, case.span_id)


def test_the_exporter_logs_nothing_when_all_goes_well(
    report: ReportDocument, receiver: HttpReceiver, root_records: Records
) -> None:
    assert emit_otlp(report) == []
    assert root_records.otel() == []


def test_a_case_without_a_trace_has_no_trace_context_even_inside_a_span(receiver: HttpReceiver) -> None:
    tracer = TracerProvider().get_tracer('test')
    with tracer.start_as_current_span('the caller'):  # the current span is not the evaluated one
        assert emit_otlp(hand_built()) == []
    found = records(receiver.requests)
    assert len(found) == 4
    for record in found:
        assert (record.trace_id, record.span_id, record.flags) == (b'', b'', 0)
    error = found[3]
    assert (error.severity_number, error.severity_text) == (17, 'ERROR')
    assert attributes(error)['error.type'] == '_OTHER'


def test_service_name_and_resource_from_the_environment(
    report: ReportDocument, receiver: HttpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('OTEL_SERVICE_NAME', 'nightly-evals')
    monkeypatch.setenv('OTEL_RESOURCE_ATTRIBUTES', 'deployment.environment=ci,service.version=7')
    assert emit_otlp(report) == []
    resource = {kv.key: plain(kv.value) for kv in receiver.requests[0].resource_logs[0].resource.attributes}
    assert (resource['service.name'], resource['deployment.environment'], resource['service.version']) == (
        'nightly-evals',
        'ci',
        '7',
    )
    monkeypatch.delenv('OTEL_SERVICE_NAME')
    monkeypatch.setenv('OTEL_RESOURCE_ATTRIBUTES', 'service.name=from-attributes')
    assert emit_otlp(report, service_name='ignored-when-the-environment-names-one') == []
    resource = {kv.key: plain(kv.value) for kv in receiver.requests[1].resource_logs[0].resource.attributes}
    assert resource['service.name'] == 'from-attributes'


def test_headers_and_gzip_from_the_environment(
    report: ReportDocument, receiver: HttpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_HEADERS', 'authorization=Bearer%20t0ken,x-team=evals')
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_COMPRESSION', 'gzip')
    assert emit_otlp(report) == []
    [headers] = receiver.headers
    assert (headers['authorization'], headers['x-team'], headers['content-encoding']) == (
        'Bearer t0ken',
        'evals',
        'gzip',
    )
    assert len(records(receiver.requests)) == 17


def test_the_logs_endpoint_wins_over_the_base_endpoint(
    report: ReportDocument, receiver: HttpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_ENDPOINT', f'http://127.0.0.1:{free_port()}')
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_LOGS_ENDPOINT', f'{receiver.endpoint}/v1/logs')
    assert emit_otlp(report) == []
    assert len(records(receiver.requests)) == 17


def big_document(results: int) -> ReportDocument:
    cases = [
        CaseResult(
            name=f'case{i}',
            scores={f's{j}': ScoreResult(j / 100) for j in range(100)},
            trace_id=f'{i + 0xABC:032x}',
            span_id=f'{i + 0xDEF:016x}',
        )
        for i in range(results // 100)
    ]
    return ReportDocument(name='big', cases=cases)


def test_a_large_run_goes_in_requests_of_at_most_1000_records(receiver: HttpReceiver) -> None:
    document = big_document(2500)
    assert emit_otlp(document, time_unix_nano=NOW) == []
    assert [len(records([r])) for r in receiver.requests] == [1000, 1000, 500]
    sent = [
        (attributes(r)['agentic_evals_otel.case'], attributes(r)['gen_ai.evaluation.name'])
        for r in records(receiver.requests)
    ]
    assert sent == [(c.name, s) for c in document.cases for s in c.scores]
    lines = render_otlp_json_lines(document, time_unix_nano=NOW).splitlines()
    assert [len(json.loads(line)['resourceLogs'][0]['scopeLogs'][0]['logRecords']) for line in lines] == [
        1000,
        1000,
        500,
    ]
    assert [as_json(r) for r in receiver.requests] == [json.loads(line) for line in lines]


# --- failures: warnings, never exceptions ---------------------------------------------------------


def test_a_receiver_answering_500_is_a_warning(
    report: ReportDocument, receiver: HttpReceiver, root_records: Records
) -> None:
    receiver.mode = 'error'
    warnings = emit_otlp(report, timeout=SHORT)
    assert len(warnings) == 1
    assert warnings[0].startswith(
        f'could not send 17 of 17 evaluation events to {receiver.endpoint}/v1/logs (OTLP http/protobuf): '
    )
    assert '\n' not in warnings[0]
    assert receiver.posts >= 1
    assert root_records.otel() == []  # captured, not printed


def test_no_receiver_is_a_warning(
    report: ReportDocument, monkeypatch: pytest.MonkeyPatch, root_records: Records
) -> None:
    port = free_port()
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_ENDPOINT', f'http://127.0.0.1:{port}')
    assert emit_otlp(report, timeout=SHORT) == [
        f'could not send 17 of 17 evaluation events to http://127.0.0.1:{port}/v1/logs (OTLP http/protobuf): Connection refused'
    ]
    assert root_records.otel() == []


def test_a_receiver_that_never_answers_is_a_warning_within_the_budget(
    report: ReportDocument, receiver: HttpReceiver
) -> None:
    receiver.mode = 'hang'
    [warning] = emit_otlp(report, timeout=SHORT)  # returns: the budget bounds requests and retries alike
    assert warning.startswith(f'could not send 17 of 17 evaluation events to {receiver.endpoint}/v1/logs')


def test_a_failing_exporter_object_is_a_warning(report: ReportDocument) -> None:
    class Refusing:
        def export(self, batch: Any) -> Any:
            raise ConnectionRefusedError(111, 'Connection refused')

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 0) -> bool:
            return True

    assert emit_otlp(report, exporter=Refusing(), timeout=SHORT) == [  # type: ignore[arg-type]
        'could not send 17 of 17 evaluation events to the Refusing: Connection refused'
    ]


# --- over OTLP/gRPC -------------------------------------------------------------------------------


def test_grpc_selected_by_the_protocol_variable(
    report: ReportDocument, receiver: HttpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert emit_otlp(report, time_unix_nano=NOW) == []
    with GrpcReceiver() as grpc_receiver:
        monkeypatch.setenv('OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc')
        monkeypatch.setenv('OTEL_EXPORTER_OTLP_ENDPOINT', grpc_receiver.endpoint)
        monkeypatch.setenv('OTEL_EXPORTER_OTLP_HEADERS', 'x-team=evals')
        assert otlp_protocol() == 'grpc'
        assert emit_otlp(report, time_unix_nano=NOW) == []
    assert [as_json(r) for r in grpc_receiver.requests] == [as_json(r) for r in receiver.requests]  # the same events
    assert grpc_receiver.metadata[0]['x-team'] == 'evals'


def test_the_logs_protocol_wins_over_the_general_one(report: ReportDocument, monkeypatch: pytest.MonkeyPatch) -> None:
    with GrpcReceiver() as grpc_receiver:
        monkeypatch.setenv('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/protobuf')
        monkeypatch.setenv('OTEL_EXPORTER_OTLP_LOGS_PROTOCOL', 'grpc')
        monkeypatch.setenv('OTEL_EXPORTER_OTLP_LOGS_ENDPOINT', grpc_receiver.endpoint)
        assert emit_otlp(report) == []
    assert len(records(grpc_receiver.requests)) == 17


def test_no_grpc_receiver_is_a_warning(
    report: ReportDocument, monkeypatch: pytest.MonkeyPatch, root_records: Records
) -> None:
    endpoint = f'http://127.0.0.1:{free_port()}'
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc')
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint)
    [warning] = emit_otlp(report, timeout=SHORT)
    assert warning.startswith(f'could not send 17 of 17 evaluation events to {endpoint} (OTLP grpc): ')
    assert root_records.otel() == []


def test_the_sdk_switched_off_sends_nothing_and_says_so(
    report: ReportDocument, receiver: HttpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('OTEL_SDK_DISABLED', 'true')
    assert emit_otlp(report) == ['OTEL_SDK_DISABLED is set: 17 evaluation events not sent']
    assert receiver.posts == 0


# --- configuration errors -------------------------------------------------------------------------


def test_an_unsupported_protocol_is_an_error(report: ReportDocument, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/json')
    with pytest.raises(
        AgenticEvalsError, match=r"^OTLP protocol 'http/json' is not supported for events: use http/protobuf or grpc$"
    ):
        emit_otlp(report)


@pytest.mark.parametrize(
    ('protocol', 'module'),
    [
        ('http/protobuf', 'opentelemetry.exporter.otlp.proto.http._log_exporter'),
        ('grpc', 'opentelemetry.exporter.otlp.proto.grpc._log_exporter'),
    ],
)
def test_a_missing_exporter_says_to_install_the_extra(
    report: ReportDocument, monkeypatch: pytest.MonkeyPatch, protocol: str, module: str
) -> None:
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_PROTOCOL', protocol)
    monkeypatch.setitem(sys.modules, module, None)  # as if the package were not installed
    with pytest.raises(AgenticEvalsError) as raised:
        emit_otlp(report)
    message = str(raised.value)
    assert message == (
        f"sending events over OTLP {protocol} needs its exporter: install the OTLP exporters: pip install 'agentic-evals-otel[otlp]'"
    )
    assert render_otlp_json_lines(report)  # the file needs no exporter


def test_the_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert export_timeout() == 5.0
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_TIMEOUT', '12')
    assert export_timeout() == 12.0
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_LOGS_TIMEOUT', '2.5')
    assert export_timeout() == 2.5
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_LOGS_TIMEOUT', 'soon')
    assert export_timeout() == 12.0
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_TIMEOUT', '-1')
    assert export_timeout() == 5.0


# --- OTLP JSON lines ------------------------------------------------------------------------------


def test_the_file_carries_what_the_wire_carries(report: ReportDocument, receiver: HttpReceiver, tmp_path: Path) -> None:
    assert emit_otlp(report, time_unix_nano=NOW) == []
    path = tmp_path / 'events.otlp.jsonl'
    assert write_otlp_json_lines(report, path, time_unix_nano=NOW) == 17
    text = path.read_text(encoding='utf-8')
    assert text == render_otlp_json_lines(report, time_unix_nano=NOW)
    [line] = text.splitlines()
    assert json.loads(line) == as_json(receiver.requests[0])  # field by field, in OTLP/JSON
    assert from_json(line) == without_empty_bodies(receiver.requests[0])  # and back into protobuf


def test_the_file_encoding(report: ReportDocument) -> None:
    [line] = render_otlp_json_lines(report, time_unix_nano=NOW).splitlines()
    data = json.loads(line)
    [resource_logs] = data['resourceLogs']
    assert {'key': 'service.name', 'value': {'stringValue': 'agentic-evals-otel'}} in resource_logs['resource'][
        'attributes'
    ]
    [scope_logs] = resource_logs['scopeLogs']
    refund = next(c for c in report.cases if c.name == 'refund')
    first = scope_logs['logRecords'][0]
    expected: dict[str, Any] = {
        'timeUnixNano': str(NOW),
        'observedTimeUnixNano': str(NOW),
        'severityNumber': 9,
        'severityText': 'INFO',
        'attributes': [
            {'key': 'event.name', 'value': {'stringValue': EVENT}},
            {'key': 'gen_ai.evaluation.name', 'value': {'stringValue': 'support_trajectory'}},
            {'key': 'gen_ai.evaluation.score.value', 'value': {'doubleValue': 0.8}},
            {
                'key': 'gen_ai.evaluation.explanation',
                'value': {'stringValue': refund.scores['support_trajectory'].reason},
            },
            {'key': 'agentic_evals_otel.dataset', 'value': {'stringValue': 'support_agent'}},
            {'key': 'agentic_evals_otel.case', 'value': {'stringValue': 'refund'}},
            {'key': 'agentic_evals_otel.evaluator', 'value': {'stringValue': 'TrajectoryMatch'}},
            {'key': 'agentic_evals_otel.result.kind', 'value': {'stringValue': 'score'}},
        ],
        'flags': 1,
        'traceId': refund.trace_id,
        'spanId': refund.span_id,
    }
    if HAS_EVENT_NAME_FIELD:
        expected['eventName'] = EVENT
    assert first == expected


def test_text_utf8_cannot_carry_is_escaped() -> None:
    document = ReportDocument(
        name='d', cases=[CaseResult(name='c', assertions={'a': AssertionResult(False, 'bad \ud800 text')})]
    )
    text = render_otlp_json_lines(document)
    text.encode('utf-8')
    assert '\\ud800' in text
    assert json.loads(text)['resourceLogs'][0]['scopeLogs'][0]['logRecords'][0]['attributes'][4]['value'] == {
        'stringValue': 'bad \ud800 text'
    }


def test_nothing_to_send() -> None:
    empty = ReportDocument(name='empty')
    assert render_otlp_json_lines(empty) == ''
    assert emit_otlp(empty) == []


def test_an_unwritable_path_is_a_file_error(report: ReportDocument, tmp_path: Path) -> None:
    with pytest.raises(FileError, match=r'missing/events\.jsonl: cannot write: No such file or directory$'):
        write_otlp_json_lines(report, tmp_path / 'missing' / 'events.jsonl')
    with pytest.raises(FileError, match=r'cannot write: Is a directory$'):
        write_otlp_json_lines(report, tmp_path)
