"""Ctrl-C in the command-line process: always exit status 130 and one line, wherever it lands.

Python raises `KeyboardInterrupt` wherever the main thread is, and some places turn it into
something else: an exception in a class's `__set_name__` becomes a `RuntimeError` (before 3.12),
pydantic-core reports one raised while it builds a schema as a `SchemaError`, and one raised in a
weak reference's callback or a finalizer is printed as "Exception ignored" and lost. So the
process's SIGINT handler remembers the key was pressed (`interrupted()`, whatever the error),
and an interrupt that could not be raised is sent to the main thread again, a moment later.
"""

from __future__ import annotations

import _thread
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType

_pressed = False


def on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """The command-line process's SIGINT handler: Python's own, remembering that it ran."""
    global _pressed
    _pressed = True
    raise KeyboardInterrupt


def interrupted() -> bool:
    """Whether Ctrl-C was pressed: the command then ends as an interruption, whatever a library made
    of the `KeyboardInterrupt` (another error, or nothing: caught, and gone on from)."""
    return _pressed


REDELIVERY_DELAY = 0.05
"""Seconds before a lost interrupt is sent again: sent at once, it would be raised inside the hook
that reports it (and lost again), since the main thread runs the hook."""


def watch() -> None:
    """Install `on_ctrl_c`, and an unraisable hook that sends a lost interrupt to the main thread
    again (a real SIGINT, which also wakes a blocking call). Only for the command-line process: a
    library must not take over its host's signals."""
    signal.signal(signal.SIGINT, on_ctrl_c)
    previous = sys.unraisablehook
    sys.unraisablehook = lambda info: _redeliver(info, previous)


def _redeliver(info: sys.UnraisableHookArgs, previous: Callable[[sys.UnraisableHookArgs], object]) -> None:
    if isinstance(info.exc_value, KeyboardInterrupt):
        timer = threading.Timer(REDELIVERY_DELAY, _interrupt_main, (threading.main_thread().ident,))
        timer.daemon = True
        timer.start()
    else:
        previous(info)


def _interrupt_main(main: int | None) -> None:
    if signal.getsignal(signal.SIGINT) is not on_ctrl_c:
        return  # the status is decided (SIGINT ignored, or back to its default)
    if main is not None and hasattr(signal, 'pthread_kill'):
        signal.pthread_kill(main, signal.SIGINT)  # a signal to the thread: a blocking call returns
    else:
        _thread.interrupt_main()  # Windows: raised once the main thread runs Python code again
