"""Real OTLP logs receivers on the loopback interface, for tests that send events over the wire.

`HttpReceiver` serves OTLP/HTTP (`POST /v1/logs`, protobuf, gzip or not) and `GrpcReceiver` the
OTLP gRPC `LogsService`; both decode every request with opentelemetry-proto's own classes and keep
it. A request is recorded before it is answered, so once an export has returned its requests are
here. `HttpReceiver.mode` makes it fail: `'error'` answers 500, `'hang'` never answers (until the
receiver is closed).
"""

from __future__ import annotations

import gzip
import socket
import threading
import zlib
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

Mode = Literal['ok', 'error', 'hang']
LOGS_PATH = '/v1/logs'


def free_port() -> int:
    """A port nothing listens on (bound and released): connecting to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        port: int = s.getsockname()[1]
        return port


class HttpReceiver:
    def __init__(self, mode: Mode = 'ok') -> None:
        self.mode: Mode = mode
        self.requests: list[ExportLogsServiceRequest] = []
        self.headers: list[dict[str, str]] = []
        self.posts = 0
        self._lock = threading.Lock()
        self._released = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                receiver._post(self)

            def log_message(self, format: str, *args: Any) -> None:  # quiet: the test output is the assertions
                pass

        self._server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={'poll_interval': 0.05}, name='otlp-http-receiver', daemon=True
        )
        self._thread.start()

    @property
    def endpoint(self) -> str:
        """The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (the exporter adds `/v1/logs`)."""
        return f'http://127.0.0.1:{self._server.server_address[1]}'

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        body = handler.rfile.read(int(handler.headers.get('Content-Length', 0)))
        with self._lock:
            self.posts += 1
        if self.mode == 'hang':
            self._released.wait()
            return
        if handler.path != LOGS_PATH:
            self._answer(handler, 404, b'')
            return
        if self.mode == 'error':
            self._answer(handler, 500, b'')
            return
        encoding = handler.headers.get('Content-Encoding', '')
        if encoding == 'gzip':
            body = gzip.decompress(body)
        elif encoding == 'deflate':
            body = zlib.decompress(body)
        request = ExportLogsServiceRequest()
        request.ParseFromString(body)
        with self._lock:
            self.requests.append(request)
            self.headers.append({k.lower(): v for k, v in handler.headers.items()})
        self._answer(handler, 200, logs_service_pb2.ExportLogsServiceResponse().SerializeToString())

    @staticmethod
    def _answer(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
        handler.send_response(status)
        handler.send_header('Content-Type', 'application/x-protobuf')
        handler.send_header('Content-Length', str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> HttpReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _LogsService(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, receiver: GrpcReceiver) -> None:
        self._receiver = receiver

    def Export(self, request: ExportLogsServiceRequest, context: grpc.ServicerContext) -> Any:
        with self._receiver._lock:
            self._receiver.requests.append(request)
            self._receiver.metadata.append(dict(context.invocation_metadata()))
        return logs_service_pb2.ExportLogsServiceResponse()


class GrpcReceiver:
    def __init__(self) -> None:
        self.requests: list[ExportLogsServiceRequest] = []
        self.metadata: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_LogsService(self), self._server)
        self._port = self._server.add_insecure_port('127.0.0.1:0')
        self._server.start()

    @property
    def endpoint(self) -> str:
        """An `http://` URL: the gRPC exporter then connects without TLS."""
        return f'http://127.0.0.1:{self._port}'

    def close(self) -> None:
        self._server.stop(grace=None).wait()

    def __enter__(self) -> GrpcReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
