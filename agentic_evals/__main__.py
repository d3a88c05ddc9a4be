"""`python -m agentic_evals`, and `entry`, which the `agentic-evals-otel` console script calls.

`entry` imports the command line inside its own `try`, so Ctrl-C even while the modules are still
being imported ends in one line and exit status 130, never a traceback.
"""

import contextlib
import os
import signal
import sys

PROG = 'agentic-evals-otel'
"""`cli.common.PROG`, repeated: Ctrl-C may come before that module is imported (a test checks they agree)."""
EXIT_INTERRUPTED = 130


def entry() -> int:
    """The command line of this process: `cli.main()`, with Ctrl-C caught around its imports too."""
    try:
        from .interrupts import watch

        watch()
        from .cli import main

        status = main()
        # The run is over and its status decided: a Ctrl-C from here on would only land in the
        # interpreter's shutdown (a traceback from its atexit hooks, or death by SIGINT once it has
        # reset its handlers), so it is ignored.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:
        status = _interrupted()
    except Exception:
        from .interrupts import interrupted

        if not interrupted():
            raise
        status = _interrupted()  # during the imports, as something else (see `interrupts`)
    _quiet_stdout()
    if status == EXIT_INTERRUPTED:
        # CPython remembers a KeyboardInterrupt raised inside exec'd source (dataclasses build their
        # methods that way) and, at exit, kills the process with SIGINT even though it was handled:
        # exit now, with the status we mean.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stderr.flush()
        os._exit(status)
    return status


def _interrupted() -> int:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a second Ctrl-C ends the process at once
    with contextlib.suppress(OSError, ValueError, AttributeError):  # stderr closed or broken: say nothing
        print(f'{PROG}: interrupted', file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED


def _quiet_stdout() -> None:
    """Output the reader did not take (a broken pipe, a full device) must not fail again at exit."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == '__main__':
    sys.exit(entry())
