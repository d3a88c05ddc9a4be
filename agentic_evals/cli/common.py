"""What every command shares: the program name, exit statuses, usage errors, argument types, writing files."""

from __future__ import annotations

import argparse
import math
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ..errors import AgenticEvalsError
from ..reports.gates import MinScore

PROG = 'agentic-evals'
EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as a shell reports a command stopped with Ctrl-C."""
EXIT_STATUS = 'exit status: 0 all gates passed, 1 a gate failed, 2 usage or load error'


class UsageError(AgenticEvalsError):
    """A command line that parses but cannot be acted on (exit status 2)."""


# Argument types: argparse turns their ArgumentTypeError into a usage error (exit status 2).


def number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number') from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f'{text!r} is not a finite number')
    return value


def min_score(text: str) -> MinScore:
    name, sep, threshold = text.rpartition('=')
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f'expected NAME=X (e.g. TrajectoryMatch=0.8), got {text!r}')
    return MinScore(name.strip(), number(threshold))


def fraction(text: str) -> float:
    value = number(text[:-1]) / 100 if text.endswith('%') else number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f'expected a fraction between 0 and 1 (or a percentage), got {text!r}')
    return value


def tolerance(text: str) -> float:
    value = number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f'expected a tolerance >= 0, got {text!r}')
    return value


def package_version() -> str:
    try:
        return version('agentic-evals')
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
        return 'unknown'


def write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding='utf-8')
    except OSError as e:
        raise UsageError(f'{path}: cannot write: {e.strerror or e}') from None
