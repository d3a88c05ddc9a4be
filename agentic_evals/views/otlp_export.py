"""The evaluation events (`reports/events.py`) out of the process: sent over OTLP or written as OTLP JSON.

The same events go to a collector (`emit_otlp`, through the Logs SDK and the OTLP exporters of the
`otlp` extra) or to a file in the Collector's own OTLP JSON lines format (`render_otlp_json_lines`,
`write_otlp_json_lines`, encoded by `otlp_encoding`), so a file replayed later and a live export
carry the same records.

Sending is best effort: a run's verdict never depends on a collector, so a failed or slow export is
a warning returned to the caller, within a bounded time, and the exporters' own log records are
captured rather than printed.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from opentelemetry import trace
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.sdk import _logs as sdk_logs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.environment_variables import (
    OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_EXPORTER_OTLP_LOGS_ENDPOINT,
    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
    OTEL_EXPORTER_OTLP_LOGS_TIMEOUT,
    OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TIMEOUT,
    OTEL_SDK_DISABLED,
)
from opentelemetry.sdk.resources import OTELResourceDetector, Resource
from opentelemetry.trace import TraceFlags

from ..conventions import genai
from ..errors import AgenticEvalsError, FileError, os_reason
from ..otlp_encoding import json_line, key_values
from ..reports.document import ReportDocument
from ..reports.events import EvaluationEvent, event_count, iter_evaluation_events

if TYPE_CHECKING:
    from opentelemetry.sdk._logs.export import LogRecordExporter as _Exporter
    from opentelemetry.sdk._logs.export import LogRecordExportResult as _Result
else:
    try:  # later SDKs renamed the exporter interface, keeping the old names as deprecated aliases
        from opentelemetry.sdk._logs.export import LogRecordExporter as _Exporter
        from opentelemetry.sdk._logs.export import LogRecordExportResult as _Result
    except ImportError:  # the oldest supported SDK (1.30)
        from opentelemetry.sdk._logs.export import LogExporter as _Exporter
        from opentelemetry.sdk._logs.export import LogExportResult as _Result

DEFAULT_SERVICE_NAME = 'agentic-evals-otel'
"""`service.name` of the events unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names one."""
DEFAULT_TIMEOUT = 5.0
"""Seconds an export may take in all (every request and retry) unless OTEL_EXPORTER_OTLP_TIMEOUT says."""
MAX_RECORDS_PER_REQUEST = 1000
"""Log records per OTLP request, on the wire and per line of a file."""
HTTP_PROTOBUF = 'http/protobuf'
GRPC = 'grpc'
PROTOCOLS = (HTTP_PROTOBUF, GRPC)
INSTALL_HINT = "install the OTLP exporters: pip install 'agentic-evals-otel[otlp]'"

_SCOPE = 'agentic_evals'
_PACKAGE = 'agentic-evals-otel'
_REASON_LIMIT = 300

# --- the resource and scope ---------------------------------------------------------------------


def otel_resource(service_name: str = DEFAULT_SERVICE_NAME) -> Resource:
    """The SDK's resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME, `telemetry.sdk.*`), with our default name.

    `Resource.create` lets explicit attributes win over the environment, so `service.name` is passed
    only when the environment names no service.
    """
    from_env = OTELResourceDetector().detect().attributes
    return Resource.create({} if from_env.get(genai.SERVICE_NAME) else {genai.SERVICE_NAME: service_name})


def _scope_version() -> str | None:
    try:
        return metadata.version(_PACKAGE)
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return None


# --- OTLP JSON lines ------------------------------------------------------------------------------


def render_otlp_json_lines(
    document: ReportDocument,
    *,
    service_name: str = DEFAULT_SERVICE_NAME,
    time_unix_nano: int | None = None,
) -> str:
    """The events as OTLP JSON lines, as the Collector's `file` exporter writes logs.

    Each line is one `ExportLogsServiceRequest` of at most `MAX_RECORDS_PER_REQUEST` records in the
    OTLP/JSON encoding: lowerCamelCase keys, hex trace and span ids, 64-bit integers as decimal
    strings. `eventName` is written when the installed opentelemetry-proto has the field (1.30 has
    not), the `event.name` attribute always. Empty text for a document without results.
    """
    return ''.join(otlp_json_line_chunks(document, service_name=service_name, time_unix_nano=time_unix_nano))


def otlp_json_line_chunks(
    document: ReportDocument,
    *,
    service_name: str = DEFAULT_SERVICE_NAME,
    time_unix_nano: int | None = None,
) -> Iterator[str]:
    """`render_otlp_json_lines`'s text a line at a time (`MAX_RECORDS_PER_REQUEST` events each), made as
    the cases are read."""
    return _json_lines(iter_evaluation_events(document), service_name, time_unix_nano)


def write_otlp_json_lines(
    document: ReportDocument,
    path: str | Path,
    *,
    service_name: str = DEFAULT_SERVICE_NAME,
    time_unix_nano: int | None = None,
) -> int:
    """Write `render_otlp_json_lines` to `path` (replacing it); returns the number of events.

    Raises `FileError` when the file cannot be written.
    """
    path = Path(path)
    count = 0

    def counted() -> Iterator[EvaluationEvent]:
        nonlocal count
        for event in iter_evaluation_events(document):
            count += 1
            yield event

    lines = _json_lines(counted(), service_name, time_unix_nano)
    try:
        file = path.open('w', encoding='utf-8')
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
        raise FileError(path, f'cannot write: {os_reason(e)}') from None
    with file:
        for line in lines:  # an error making a line is raised as it is: only writing is a FileError
            try:
                file.write(line)
            except OSError as e:
                raise FileError(path, f'cannot write: {os_reason(e)}') from None
        try:
            file.flush()
        except OSError as e:
            raise FileError(path, f'cannot write: {os_reason(e)}') from None
    return count


def _json_lines(events: Iterable[EvaluationEvent], service_name: str, time_unix_nano: int | None) -> Iterator[str]:
    """One OTLP JSON line per `MAX_RECORDS_PER_REQUEST` events, with only that many made at a time."""
    now = time.time_ns() if time_unix_nano is None else time_unix_nano
    resource = {'attributes': key_values(otel_resource(service_name).attributes)}
    scope: dict[str, Any] = {'name': _SCOPE}
    if (version := _scope_version()) is not None:
        scope['version'] = version
    remaining = iter(events)
    while batch := list(itertools.islice(remaining, MAX_RECORDS_PER_REQUEST)):
        records = [_json_record(e, now) for e in batch]
        request = {'resourceLogs': [{'resource': resource, 'scopeLogs': [{'scope': scope, 'logRecords': records}]}]}
        yield json_line(request)


_HAS_EVENT_NAME_FIELD = 'event_name' in logs_pb2.LogRecord.DESCRIPTOR.fields_by_name


def _json_record(event: EvaluationEvent, now: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        'timeUnixNano': str(now),
        'observedTimeUnixNano': str(now),
        'severityNumber': event.severity.value,
        'severityText': event.severity.name,
        'attributes': key_values(event.attributes),
    }
    if event.trace_id is not None:
        record['flags'] = int(TraceFlags.SAMPLED)
        record['traceId'] = event.trace_id
        if event.span_id is not None:
            record['spanId'] = event.span_id
    if _HAS_EVENT_NAME_FIELD:
        record['eventName'] = event.name
    return record


# --- OTLP export ----------------------------------------------------------------------------------


def otlp_protocol() -> str:
    """The protocol `emit_otlp` uses, as the exporters choose it.

    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.
    Raises `AgenticEvalsError` for a protocol the Python exporters lack (`http/json`) or whose
    exporter is not installed, so a command can check before it runs anything.
    """
    protocol = (
        os.environ.get(OTEL_EXPORTER_OTLP_LOGS_PROTOCOL) or os.environ.get(OTEL_EXPORTER_OTLP_PROTOCOL) or HTTP_PROTOBUF
    ).strip()
    if protocol not in PROTOCOLS:
        raise AgenticEvalsError(f'OTLP protocol {protocol!r} is not supported for events: use http/protobuf or grpc')
    _exporter_class(protocol)
    return protocol


def _exporter_class(protocol: str) -> type[_Exporter]:
    try:
        if protocol == GRPC:
            from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as Grpc

            return Grpc
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as Http

        return Http
    except ImportError:
        raise AgenticEvalsError(f'sending events over OTLP {protocol} needs its exporter: {INSTALL_HINT}') from None


def otlp_endpoint(protocol: str) -> str:
    """Where the exporter of `protocol` sends logs, read from the environment as the exporters do (for messages)."""
    if endpoint := os.environ.get(OTEL_EXPORTER_OTLP_LOGS_ENDPOINT):
        return endpoint
    if protocol == GRPC:
        return os.environ.get(OTEL_EXPORTER_OTLP_ENDPOINT) or 'http://localhost:4317'
    base = os.environ.get(OTEL_EXPORTER_OTLP_ENDPOINT) or 'http://localhost:4318'
    return base.rstrip('/') + '/v1/logs'


def export_timeout() -> float:
    """Seconds an export may take in all: OTEL_EXPORTER_OTLP_LOGS_TIMEOUT or OTEL_EXPORTER_OTLP_TIMEOUT, else 5.

    Seconds, as the Python exporters read those variables; a value that is not a positive number is ignored.
    """
    for name in (OTEL_EXPORTER_OTLP_LOGS_TIMEOUT, OTEL_EXPORTER_OTLP_TIMEOUT):
        try:
            seconds = float(os.environ.get(name, ''))
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds > 0:
            return seconds
    return DEFAULT_TIMEOUT


def emit_otlp(
    document: ReportDocument,
    *,
    timeout: float | None = None,
    service_name: str = DEFAULT_SERVICE_NAME,
    exporter: _Exporter | None = None,
    time_unix_nano: int | None = None,
) -> list[str]:
    """Send the document's events through the Logs SDK; returns warnings (one line each), empty when all were sent.

    The exporter is the OTLP one the environment selects (`otlp_protocol`), configured by the
    exporters' own variables (endpoint, headers, compression, certificates); pass `exporter` to
    send elsewhere. The call returns within about `timeout` seconds (`export_timeout()` by default),
    retries included: a collector that is down, refuses or does not answer gives a warning, never an
    exception. An export still retrying at the deadline is left to finish on a daemon thread, which
    does not keep the process alive. Raises `AgenticEvalsError` only for configuration: an
    unsupported protocol, a missing exporter package, a bad OTEL_EXPORTER_OTLP_* value.
    """
    total = event_count(document)
    seconds = export_timeout() if timeout is None else timeout
    diagnosis = _Diagnosis()
    if exporter is None:
        protocol = otlp_protocol()
        exporter = _make_exporter(protocol, seconds, diagnosis)
        where = f'{otlp_endpoint(protocol)} (OTLP {protocol})'
    else:
        where = f'the {type(exporter).__name__}'
    if not total or _sdk_disabled():
        exporter.shutdown()  # type: ignore[no-untyped-call]
        return [f'{OTEL_SDK_DISABLED} is set: {total} evaluation events not sent'] if total else []
    events = iter_evaluation_events(document)
    return _send(events, total, _ObservedExporter(exporter, diagnosis), where, seconds, service_name, time_unix_nano)


_CREDENTIAL_PROVIDERS = (
    'OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER',
    'OTEL_PYTHON_EXPORTER_OTLP_HTTP_LOGS_CREDENTIAL_PROVIDER',
)
"""Newer HTTP exporters build their session from these; with one set, the exporter keeps its own session."""


def _sdk_disabled() -> bool:
    """The SDK's switch: with it set, its loggers drop every record (a warning says so rather than a failure)."""
    return os.environ.get(OTEL_SDK_DISABLED, '').strip().lower() == 'true'


def _make_exporter(protocol: str, seconds: float, diagnosis: _Diagnosis) -> _Exporter:
    cls = _exporter_class(protocol)
    # Each request gets at most the whole budget; the exporter reads everything else from the environment.
    options: dict[str, Any] = {'timeout': seconds}
    if protocol == HTTP_PROTOBUF and not any(os.environ.get(name) for name in _CREDENTIAL_PROVIDERS):
        options['session'] = _watched_session(diagnosis)
    try:
        return cls(**options)
    except Exception as e:  # a bad OTEL_EXPORTER_OTLP_* value (compression, certificate): a configuration error
        raise AgenticEvalsError(f'cannot set up the OTLP {protocol} exporter: {_one_line(str(e))}') from None


def _watched_session(diagnosis: _Diagnosis) -> Any:
    """A `requests` session that tells `diagnosis` why a request failed, and refuses to retry once it is given up.

    Exporters report only success or failure (and, depending on the version, log the cause or not);
    the session sees the status code or the connection error itself, in every exporter version.
    """
    import requests  # the HTTP exporter's own dependency

    class WatchedSession(requests.Session):
        def request(self, method: str, url: Any, *args: Any, **kwargs: Any) -> requests.Response:
            if diagnosis.abandoned:
                raise requests.ConnectionError('the export was given up')
            try:
                response = super().request(method, url, *args, **kwargs)
            except Exception as e:
                diagnosis.note(_error_reason(e))
                raise
            if response.status_code >= 400:
                diagnosis.note(f'HTTP {response.status_code} {response.reason}'.strip())
            return response

    return WatchedSession()


class _Diagnosis:
    """Why an export failed, as first seen: by the HTTP session, the exporter wrapper, or the exporters' logs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notes: list[str] = []
        self.abandoned = False

    def note(self, reason: str) -> None:
        with self._lock:
            self._notes.append(reason)

    def first(self) -> str | None:
        with self._lock:
            return _one_line(self._notes[0]) if self._notes else None


WINDOW = 10 * MAX_RECORDS_PER_REQUEST
"""Events handed to the SDK before `emit_otlp` waits for them to be exported: its queue holds at most
this many records, however many cases the report has."""


def _send(
    events: Iterable[EvaluationEvent],
    total: int,
    observed: _ObservedExporter,
    where: str,
    seconds: float,
    service_name: str,
    time_unix_nano: int | None,
) -> list[str]:
    captured = _CapturedLogs()
    captured.start()
    budget = seconds + 0.5
    """Seconds left to wait for exports in all (making the events is not counted)."""
    timed_out = False
    try:
        provider = LoggerProvider(resource=otel_resource(service_name), shutdown_on_exit=False)
        millis = max(int(seconds * 1000), 1)
        provider.add_log_record_processor(
            BatchLogRecordProcessor(
                observed,
                # Export only full batches until a flush: the run's events go in as few requests as possible.
                schedule_delay_millis=max(millis * 10, 60_000),
                max_export_batch_size=MAX_RECORDS_PER_REQUEST,
                export_timeout_millis=millis,
                max_queue_size=max(min(total, WINDOW), MAX_RECORDS_PER_REQUEST),
            )
        )
        logger = provider.get_logger(_SCOPE, _scope_version())
        now = time.time_ns() if time_unix_nano is None else time_unix_nano
        for index, event in enumerate(events, 1):
            _emit(logger, event, now)
            if index % WINDOW == 0 and index < total:
                # The queue is full: wait for it to be exported (within the budget) before making more.
                waited, budget = _waited(lambda: _flush(provider, observed, millis), budget)
                if not waited:
                    timed_out = True
                    break
    except BaseException:
        captured.stop()
        raise

    def finish() -> None:
        try:
            provider.force_flush(millis)
            provider.shutdown()
        except Exception as e:  # an SDK bug must not escape a daemon thread as a traceback
            observed.diagnosis.note(_error_reason(e))
        finally:
            captured.stop()  # only now: an export given up at the deadline may still log as it ends

    # The SDK's flush blocks (1.4x) or waits on its worker (1.30), and exporters retry with backoff:
    # the flush runs on a daemon thread, given up at the deadline.
    if not timed_out:
        finished, budget = _waited(finish, budget)
        timed_out = not finished
    else:
        threading.Thread(target=finish, name='agentic-evals-otlp-events', daemon=True).start()
    if timed_out:
        observed.abandon()
    unsent = total - observed.sent
    if not unsent:
        return []
    reason = observed.diagnosis.first() or captured.first()
    if timed_out:
        detail = f'gave up after {seconds:g} s' + (f' ({reason})' if reason else '')
    else:
        detail = reason or 'the exporter reported a failure'
    return [f'could not send {unsent} of {total} evaluation events to {where}: {detail}']


def _flush(provider: LoggerProvider, observed: _ObservedExporter, millis: int) -> None:
    try:
        provider.force_flush(millis)
    except Exception as e:  # an SDK bug must not escape a daemon thread as a traceback
        observed.diagnosis.note(_error_reason(e))


def _waited(action: Callable[[], None], budget: float) -> tuple[bool, float]:
    """Run `action` on a daemon thread for at most `budget` seconds: whether it ended, and the budget left."""
    started = time.monotonic()
    worker = threading.Thread(target=action, name='agentic-evals-otlp-events', daemon=True)
    worker.start()
    worker.join(max(budget, 0.0))
    return not worker.is_alive(), budget - (time.monotonic() - started)


_SDK_EMIT_TAKES_FIELDS = 'event_name' in inspect.signature(sdk_logs.Logger.emit).parameters
"""Later SDKs' `Logger.emit` takes the record's fields (with `event_name`); 1.30's takes an SDK `LogRecord`."""
_SDK_RECORD: Any = None if _SDK_EMIT_TAKES_FIELDS else sdk_logs.LogRecord  # type: ignore[attr-defined]
_SDK_RECORD_TAKES_EVENT_NAME = _SDK_RECORD is not None and 'event_name' in inspect.signature(_SDK_RECORD).parameters


def _emit(logger: Any, event: EvaluationEvent, now: int) -> None:
    trace_id = int(event.trace_id, 16) if event.trace_id is not None else 0
    span_id = int(event.span_id, 16) if event.span_id is not None else 0
    flags = TraceFlags(TraceFlags.SAMPLED if trace_id else TraceFlags.DEFAULT)
    if _SDK_EMIT_TAKES_FIELDS:
        # An explicit context, even without a trace: the current span (if any) is not the evaluated one.
        span = trace.NonRecordingSpan(trace.SpanContext(trace_id, span_id, is_remote=True, trace_flags=flags))
        logger.emit(
            timestamp=now,
            observed_timestamp=now,
            context=trace.set_span_in_context(span if trace_id else trace.INVALID_SPAN),
            severity_number=event.severity,
            severity_text=event.severity.name,
            attributes=event.attributes,
            event_name=event.name,
        )
        return
    fields: dict[str, Any] = {
        'timestamp': now,
        'observed_timestamp': now,
        'trace_id': trace_id,
        'span_id': span_id,
        'trace_flags': flags,
        'severity_text': event.severity.name,
        'severity_number': event.severity,
        'resource': logger.resource,  # the logger's own: one resource for the whole batch
        'attributes': event.attributes,
    }
    if _SDK_RECORD_TAKES_EVENT_NAME:
        fields['event_name'] = event.name
    logger.emit(_SDK_RECORD(**fields))


class _ObservedExporter(_Exporter):
    """Wraps the real exporter to count what was sent: the SDK's processors swallow export failures."""

    def __init__(self, inner: _Exporter, diagnosis: _Diagnosis) -> None:
        self._inner = inner
        self.diagnosis = diagnosis
        self._lock = threading.Lock()
        self._shut_down = False
        self.sent = 0

    def export(self, batch: Sequence[Any]) -> _Result:
        if self.diagnosis.abandoned:
            return _Result.FAILURE
        try:
            result = self._inner.export(batch)
        except Exception as e:  # 1.30's HTTP exporter raises on a refused connection
            self.diagnosis.note(_error_reason(e))
            return _Result.FAILURE
        if result == _Result.SUCCESS:
            with self._lock:
                self.sent += len(batch)
        return result

    def abandon(self) -> None:
        """Past the deadline: later batches fail at once, and the exporter is told to stop retrying."""
        self.diagnosis.abandoned = True
        threading.Thread(target=self.shutdown, name='agentic-evals-otlp-shutdown', daemon=True).start()

    def shutdown(self) -> None:
        with self._lock:
            if self._shut_down:
                return
            self._shut_down = True
        try:
            self._inner.shutdown()  # type: ignore[no-untyped-call]
        except Exception as e:
            self.diagnosis.note(_error_reason(e))

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._inner.force_flush(timeout_millis)


def _error_reason(error: BaseException) -> str:
    """The operating system's reason at the root of an error (`Connection refused`), else the error's text.

    Connection errors from requests and urllib3 wrap the socket error several levels deep, in a
    message that names object addresses; the root reason is what a user can act on.
    """
    chain: list[BaseException] = []
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop(0)
        if any(current is seen for seen in chain):
            continue
        chain.append(current)
        linked = [current.__cause__, current.__context__, getattr(current, 'reason', None), *current.args]
        pending.extend(item for item in linked if isinstance(item, BaseException))
    for current in chain:
        if isinstance(current, OSError) and current.strerror:
            return current.strerror
    if any(isinstance(current, TimeoutError) for current in chain):
        return 'timed out waiting for an answer'
    return f'{type(error).__name__}: {error}'


_RETRYING = re.compile(r',? retrying in [\d.]+ ?s\b\.?')
"""The exporters' "retrying in 2s" in a logged failure: not true of the export once it is given up."""


def _one_line(text: str) -> str:
    line = ' '.join(_RETRYING.sub('.', text).replace('..', '.').split())
    return line if len(line) <= _REASON_LIMIT else line[: _REASON_LIMIT - 1] + '…'


class _CapturedLogs(logging.Handler):
    """The `opentelemetry` loggers' records while an export runs, kept for the warning instead of printed.

    The exporters log every retry and failure (with tracebacks); the caller gets one warning line.
    Several exports may overlap, so the logger is taken over by the first and given back by the last.
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _active: ClassVar[list[_CapturedLogs]] = []
    _saved_propagate: ClassVar[bool] = True
    _LOGGER: ClassVar[str] = 'opentelemetry'

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._first: str | None = None
        self._started = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._first is not None:  # the first failure is the cause; the rest are its retries
            return
        # An exception among the arguments (the HTTP exporter logs its connection error) says more than the message.
        errors = [arg for arg in (record.args if isinstance(record.args, tuple) else ()) if isinstance(arg, Exception)]
        try:
            self._first = _error_reason(errors[0]) if errors else record.getMessage()
        except Exception:  # a record whose arguments do not fit its message
            self._first = str(record.msg)

    def first(self) -> str | None:
        return None if self._first is None else _one_line(self._first)

    def start(self) -> None:
        logger = logging.getLogger(self._LOGGER)
        with _CapturedLogs._lock:
            if not _CapturedLogs._active:
                _CapturedLogs._saved_propagate = logger.propagate
                logger.propagate = False
            _CapturedLogs._active.append(self)
            logger.addHandler(self)
            self._started = True

    def stop(self) -> None:
        logger = logging.getLogger(self._LOGGER)
        with _CapturedLogs._lock:
            if not self._started:
                return
            self._started = False
            logger.removeHandler(self)
            _CapturedLogs._active.remove(self)
            if not _CapturedLogs._active:
                logger.propagate = _CapturedLogs._saved_propagate
