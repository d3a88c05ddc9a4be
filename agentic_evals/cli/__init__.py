"""`agentic-evals-otel`: score captured traces, gate releases on the scores, inspect and compare.

One module per command (`run`, `inspect`, `compare`, `render`, `schema`), each with its `add_parser` and its
handler: parse -> load -> evaluate -> render -> exit status. Each exit status means one thing: 0 every gate
passed, 1 a gate failed (or `compare` found a regression), 2 bad usage or input (one line on
stderr naming the file and the problem), 3 an internal error, a bug (one line; the traceback with
`AGENTIC_EVALS_DEBUG=1`), 130 interrupted. A reader that leaves early (`| head`) changes none of
them. The parsers are light; a handler imports what it needs when it runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from ..errors import AgenticEvalsError
from ..interrupts import interrupted
from ..views.text import one_line
from . import compare, inspect, render, run, schema
from .common import (
    DEBUG_ENV,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_STATUS,
    EXIT_USAGE,
    PROG,
    CommandParser,
    GuardedStreams,
    OutputError,
    Parser,
    VersionAction,
    say,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: `sys.argv[1:]`) and return its exit status."""
    with GuardedStreams():
        status = _run(argv)
        try:
            sys.stdout.flush()
        except OutputError as error:
            say(f'{PROG}: error: {error}')
            status = EXIT_USAGE
    return status


def _run(argv: Sequence[str] | None) -> int:
    try:
        status = _dispatch(argv)
    except KeyboardInterrupt:
        status = EXIT_INTERRUPTED
    except Exception as error:
        if interrupted():  # a Ctrl-C that became another exception (see `interrupts`)
            status = EXIT_INTERRUPTED
        elif isinstance(error, AgenticEvalsError):
            say(f'{PROG}: error: {one_line(str(error))}')
            status = EXIT_USAGE
        else:  # a bug: said in one line, never mistaken for a failed gate (1) or bad input (2)
            status = _internal_error(error)
    if status == EXIT_INTERRUPTED or interrupted():  # also one a library caught and went on from
        say(f'{PROG}: interrupted')
        return EXIT_INTERRUPTED
    return status


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2, message already printed)
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    handler: Callable[..., int] = args.handler
    return handler(args)


def _internal_error(error: Exception) -> int:
    debug = os.environ.get(DEBUG_ENV, '') not in ('', '0')
    if debug:
        import traceback

        traceback.print_exc()
    detail = f': {one_line(str(error))}' if str(error) else ''
    hint = '' if debug else f'; {DEBUG_ENV}=1 shows the traceback'
    say(f'{PROG}: internal error: {type(error).__name__}{detail} (a bug in agentic_evals, please report it{hint})')
    return EXIT_INTERNAL


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description='Score AI-agent trajectories from OpenTelemetry traces, gate releases on the scores.',
        epilog=EXIT_STATUS,
    )
    parser.add_argument('--version', action=VersionAction)
    commands = parser.add_subparsers(title='commands', metavar='COMMAND', required=True, parser_class=CommandParser)
    run.add_parser(commands)
    inspect.add_parser(commands)
    compare.add_parser(commands)
    render.add_parser(commands)
    schema.add_parser(commands)
    parser.commands = commands.choices
    return parser
