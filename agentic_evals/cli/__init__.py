"""`agentic-evals`: score captured traces, gate releases on the scores, inspect and compare.

One module per command (`run`, `inspect`, `compare`), each with its `add_parser` and its handler:
parse -> load -> evaluate -> render -> exit status. Exit status: 0 every gate passed, 1 a gate
failed (or `compare` found a regression), 2 usage or load error (one line on stderr, never a
traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from ..errors import AgenticEvalsError
from . import compare, inspect, run
from .common import EXIT_INTERRUPTED, EXIT_STATUS, EXIT_USAGE, PROG, package_version


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: `sys.argv[1:]`) and return its exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2, message already printed)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except AgenticEvalsError as error:
        print(f'{PROG}: error: {error}', file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f'{PROG}: interrupted', file=sys.stderr)
        return EXIT_INTERRUPTED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description='Score AI-agent trajectories from OpenTelemetry traces, gate releases on the scores.',
        epilog=EXIT_STATUS,
    )
    parser.add_argument('--version', action='version', version=f'{PROG} {package_version()}')
    commands = parser.add_subparsers(title='commands', metavar='COMMAND', required=True)
    run.add_parser(commands)
    inspect.add_parser(commands)
    compare.add_parser(commands)
    return parser
