"""CPU the command line costs before it does any work: `--help`, against a bare interpreter.

Each command runs `REPEAT` times in a fresh interpreter; the figure is the median user + system CPU
of the child (from `os.wait4`), so a busy machine's wall-clock noise does not count. The floor is
`python -c pass`: what any Python command costs on this machine.

    python -m benchmarks.cli_startup            # REPEAT=15
    python -m benchmarks.cli_startup 41

The target (issue 8): `--help` under 0.3 s of CPU. It is met only when nothing heavy (pydantic-evals,
pydantic-ai, rich) is imported before the arguments are parsed.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPEAT = 15
TARGET = 0.3
"""Seconds of CPU `--help` may cost."""

PYTHON = sys.executable
SCRIPT = shutil.which('agentic-evals-otel', path=str(Path(PYTHON).parent))
COMMANDS: list[tuple[str, list[str]]] = [
    ('python -c pass (floor)', [PYTHON, '-c', 'pass']),
    ('python -m agentic_evals --help', [PYTHON, '-m', 'agentic_evals', '--help']),
    ('python -m agentic_evals run --help', [PYTHON, '-m', 'agentic_evals', 'run', '--help']),
    ('python -m agentic_evals compare --help', [PYTHON, '-m', 'agentic_evals', 'compare', '--help']),
    ('python -m agentic_evals inspect --help', [PYTHON, '-m', 'agentic_evals', 'inspect', '--help']),
]
if SCRIPT is not None:
    COMMANDS.append(('agentic-evals-otel --help', [SCRIPT, '--help']))


def cpu_seconds(argv: Sequence[str]) -> float:
    """User + system CPU of one run of `argv` (which must exit 0)."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f'{" ".join(argv)} exited with status {process.returncode}')
    return usage.ru_utime + usage.ru_stime


def measure(repeat: int) -> list[tuple[str, float, float]]:
    """(label, median CPU seconds, minimum) per command, runs interleaved so drift hits all alike."""
    samples: dict[str, list[float]] = {label: [] for label, _ in COMMANDS}
    for _ in range(repeat):
        for label, argv in COMMANDS:
            samples[label].append(cpu_seconds(argv))
    return [(label, statistics.median(values), min(values)) for label, values in samples.items()]


def main(argv: Sequence[str]) -> int:
    repeat = int(argv[0]) if argv else REPEAT
    results = measure(repeat)
    floor = results[0][1]
    print(f'CPU (user + sys) per run, median of {repeat}; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs')
    print(f'{"command":42} {"median":>8} {"min":>8} {"- floor":>8}')
    missed = []
    for label, median, least in results:
        print(f'{label:42} {median:8.3f} {least:8.3f} {median - floor:8.3f}')
        if '--help' in label and median > TARGET:
            missed.append(label)
    print(f'target: --help under {TARGET} s of CPU: ' + ('met' if not missed else f'missed by {", ".join(missed)}'))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
