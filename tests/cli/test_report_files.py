"""Reports are written atomically: a temporary file beside the report, renamed over it.

A full disk, a kill mid-write or an unusable name leaves the previous report whole and is one
line on stderr with exit status 2.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentic_evals.cli import common

from . import DATASET, env, run_cli, traces

OLD = 'the previous report\n'


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '250')


def _argv(flag: str, target: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    if flag == 'compare --markdown':
        report = tmp_path / 'base.json'
        assert run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--json', str(report)).code == 0
        return ['compare', str(report), str(report), '--markdown', str(target)]
    return ['run', str(DATASET), traces('baseline'), flag, str(target)]


FLAGS = ['--json', '--junit', '--markdown', 'compare --markdown']


@pytest.mark.parametrize('flag', FLAGS)
def test_the_report_is_complete_before_it_replaces_the_old_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flag: str
) -> None:
    target = tmp_path / 'report'
    target.write_text(OLD, encoding='utf-8')
    argv = _argv(flag, target, tmp_path, capsys)
    seen: list[tuple[str, str, bool]] = []
    replace = os.replace

    def checked_replace(source: str | Path, destination: str | Path) -> None:
        seen.append(
            (
                target.read_text(encoding='utf-8'),
                Path(source).read_text(encoding='utf-8'),
                Path(source).parent == tmp_path,
            )
        )
        replace(source, destination)

    monkeypatch.setattr(common.os, 'replace', checked_replace)
    assert run_cli(capsys, *argv).code == 0
    new = target.read_text(encoding='utf-8')
    assert seen == [(OLD, new, True)]  # the old report stood until the new one was whole, beside it
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith('.')) == []


@pytest.mark.parametrize('flag', FLAGS)
def test_a_full_disk_keeps_the_previous_report(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flag: str
) -> None:
    target = tmp_path / 'report'
    target.write_text(OLD, encoding='utf-8')
    argv = _argv(flag, target, tmp_path, capsys)

    def full(_: int) -> None:
        raise OSError(errno.ENOSPC, 'No space left on device')

    monkeypatch.setattr(common.os, 'fsync', full)
    done = run_cli(capsys, *argv)
    assert (done.code, done.err) == (2, f'agentic-evals-otel: error: {target}: cannot write: No space left on device\n')
    assert target.read_text(encoding='utf-8') == OLD
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith('.')] == []  # the temporary file is gone


def test_a_pipe_is_written_to_not_replaced(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A report path that is no regular file (a FIFO here; `/dev/stdout`, a device) stays what it is."""
    fifo = tmp_path / 'report.fifo'
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--json', str(fifo))
    reader.join(timeout=30)
    assert done.code == 0
    assert received and received[0].startswith(b'{')
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['report.fifo']


def test_an_overlong_file_name_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / ('r' * 300 + '.json')
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--json', str(target))
    assert done.code == 2
    assert done.err.count('\n') == 1
    assert done.err.startswith(f'agentic-evals-otel: error: {str(target)[:80]}...')
    assert done.err.endswith('r.json: cannot write: File name too long\n')
    assert [p.name for p in tmp_path.iterdir()] == []


@pytest.mark.parametrize('path', ['d' * 300 + '/report.json', 'x/' * 2500 + 'report.json'], ids=['component', 'path'])
def test_an_overlong_directory_is_one_line_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, path: str
) -> None:
    report = tmp_path / 'base.json'
    assert run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--json', str(report)).code == 0
    target = tmp_path / path
    for argv in (
        ['run', str(DATASET), traces('baseline'), '--junit', str(target)],
        ['compare', str(report), str(report), '--markdown', str(target)],
    ):
        done = run_cli(capsys, *argv)
        assert (done.code, done.out) == (2, '')
        assert done.err.startswith('agentic-evals-otel: error: ')
        assert done.err.endswith('report.json: cannot write: File name too long\n')
        assert done.err.count('\n') == 1 and len(done.err) < 250


def test_a_symlinked_report_is_written_through_and_keeps_its_mode(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    real = tmp_path / 'real.json'
    real.write_text(OLD, encoding='utf-8')
    real.chmod(0o640)
    link = tmp_path / 'link.json'
    link.symlink_to(real)
    assert run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--json', str(link)).code == 0
    assert link.is_symlink()
    assert real.read_text(encoding='utf-8').startswith('{\n  "schema": "agentic-evals/report@1"')
    assert real.stat().st_mode & 0o777 == 0o640


@pytest.mark.slow
def test_a_kill_mid_write_leaves_a_whole_report(tmp_path: Path) -> None:
    """SIGKILL while a report is being written, again and again: the file is the old report or the new, whole."""
    target = tmp_path / 'report.json'
    target.write_text(OLD, encoding='utf-8')
    new = 'x' * 50_000_000
    code = (
        'from pathlib import Path; from agentic_evals.cli.common import write_text\n'
        'print("ready", flush=True)\n'
        f'while True: write_text(Path({str(target)!r}), "x" * {len(new)})\n'
    )
    process = subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE, text=True, env=env())
    assert process.stdout is not None and process.stdout.readline() == 'ready\n'
    deadline = time.monotonic() + 60
    while not any(p.name.endswith('.tmp') for p in tmp_path.iterdir()):  # caught in the middle of a write
        assert time.monotonic() < deadline, 'no write was ever under way'
        time.sleep(0.001)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert target.read_text(encoding='utf-8') in (OLD, new)
