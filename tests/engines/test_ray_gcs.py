"""`gs://` sources and results of the Ray engine, against a real GCS JSON API server on loopback.

The server is gcp-storage-emulator's (the dev extra installs it), in this process; pyarrow's
GcsFileSystem talks HTTP to it. A URI reaches it as a user's URI reaches any GCS-compatible store,
through the query `FileSystem.from_uri` reads (`scheme`, `endpoint_override`), with `anonymous@`
before the bucket: without it pyarrow asks Google's default credentials (which look for the
metadata server and hang offline), with it pyarrow sends no credentials. The environment variable
`CLOUD_STORAGE_EMULATOR_ENDPOINT` is no help: credentials are still asked for, and it would send
every request to its endpoint, whatever the URI says. So that a URI that lost its `anonymous@`
fails at once instead of waiting, the driver and the workers get GCS_ENV. (One that lost its query
is not guarded: it would try Google's public endpoint and retry for minutes.)
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_evals import FileError
from agentic_evals.traces._parts import expand_files

from .ray_helpers import REPO, comparable, write_split
from .test_ray import BUDGETS, run, store_reports_as_locally
from .test_ray_parts import by_parts, locally

ray = pytest.importorskip('ray')
pytestmark = pytest.mark.slow

GCS_ENV = {'GOOGLE_APPLICATION_CREDENTIALS': '/nonexistent/agentic-evals-test.json', 'GCE_METADATA_ROOT': '127.0.0.1:9'}
"""Google's default credentials as a file that is not there (an error, not a wait) and no metadata server but loopback."""


@pytest.fixture(scope='module', autouse=True)
def cluster() -> Iterator[None]:
    """A local cluster of 2 CPUs whose workers import this test package; driver and workers get GCS_ENV."""
    path = os.pathsep.join(dict.fromkeys([str(REPO), *sys.path]))
    with pytest.MonkeyPatch.context() as patch:
        for name, value in GCS_ENV.items():
            patch.setenv(name, value)
        env = {'PYTHONPATH': path, **GCS_ENV}
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={'env_vars': env})
        yield
        ray.shutdown()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope='module')
def gcs() -> Iterator[tuple[Any, str]]:
    """The server (bucket `traces`, in memory), a GcsFileSystem on it, and the URI query that reaches it."""
    from gcp_storage_emulator.server import create_server
    from pyarrow import fs

    logging.getLogger('gcp_storage_emulator').setLevel(logging.WARNING)
    port = _free_port()
    server = create_server('127.0.0.1', port, in_memory=True, default_bucket='traces')
    server.start()
    query = f'?scheme=http&endpoint_override=127.0.0.1:{port}'
    filesystem = fs.GcsFileSystem(anonymous=True, scheme='http', endpoint_override=f'127.0.0.1:{port}')
    yield filesystem, query
    server.stop()


def upload(filesystem: Any, directory: Path, prefix: str) -> None:
    for path in sorted(directory.iterdir()):
        with filesystem.open_output_stream(f'traces/{prefix}/{path.name}', compression=None) as out:
            out.write(path.read_bytes())


def test_gs_traces_and_results_report_as_locally(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, gcs: tuple[Any, str]
) -> None:
    filesystem, query = gcs
    store_reports_as_locally(capsys, tmp_path, filesystem, 'gs://anonymous@traces', query, seed=13)


def test_a_bad_gs_object_is_one_line_naming_its_uri(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, gcs: tuple[Any, str]
) -> None:
    filesystem, query = gcs
    traces = tmp_path / 'traces'
    traces.mkdir()
    write_split(traces, files=4)
    (traces / 'part-03.otlp.jsonl').write_bytes(b'{"resourceSpans": 1}\n')
    upload(filesystem, traces, 'bad')
    budgets = tmp_path / 'budgets.yaml'
    budgets.write_text(BUDGETS)
    source = f'gs://anonymous@traces/bad/{query}'
    status, _, err = run(capsys, tmp_path / 'ray', '--evaluators', str(budgets), source, '--engine', 'ray')
    assert status == 2
    assert err == (
        f'agentic-evals-otel: error: gs://anonymous@traces/bad/part-03.otlp.jsonl{query}:1: resourceSpans is a number, not a list\n'
    )


def test_the_parts_reader_on_gs_globs_loads_as_locally(tmp_path: Path, gcs: tuple[Any, str]) -> None:
    """No Ray: the listing, a `**` glob across prefixes, the objects' parts joined, a missing object's error."""
    filesystem, query = gcs
    traces = tmp_path / 'traces'
    for number, seed in enumerate((3, 4)):
        directory = traces / f'day-{number}'
        directory.mkdir(parents=True)
        write_split(directory, files=3, seed=seed)
        upload(filesystem, directory, f'glob/day-{number}')
    with filesystem.open_output_stream('traces/glob/day-0/notes.txt') as out:
        out.write(b'not matched by the pattern\n')
    source = f'gs://anonymous@traces/glob/**/part-*.otlp.*{query}'
    specs = expand_files([source], lambda warning: None)
    assert [spec.shown for spec in specs] == [
        f'gs://anonymous@traces/glob/{directory.name}/{path.name}{query}'
        for directory in sorted(traces.iterdir())
        for path in sorted(directory.iterdir())
    ]
    expected, _ = locally(str(traces / '*' / 'part-*'))
    got, _ = by_parts(source)
    assert len(expected) > 10
    # The same traces, spans and tree; their sources are the objects rather than the local files.
    assert [comparable(trace)[::3] for trace in got] == [comparable(trace)[::3] for trace in expected]
    assert all(str(source).startswith('gs://anonymous@traces/glob/day-') for trace in got for source in trace.sources)
    missing = f'gs://anonymous@traces/glob/day-9.otlp.jsonl{query}'
    with pytest.raises(FileError) as error:
        expand_files([missing], lambda warning: None)
    assert str(error.value) == f'{missing}: no such file'
