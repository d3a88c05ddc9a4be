"""What every command shares: the program name, exit statuses, the parser, argument types, the
standard streams and writing report files.

Kept light: `--help` imports only this, argparse and the command modules, whose handlers import
the heavy dependencies (pydantic-evals, pydantic-ai, rich) when they run.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn, TextIO, cast

from ..errors import AgenticEvalsError, os_reason

if TYPE_CHECKING:
    from ..reports.gates import Gates, MaxMetric, MinScore

PROG = 'agentic-evals-otel'
"""The command, as installed by the `agentic-evals-otel` distribution (`agentic-evals` is another project's)."""
DISTRIBUTION = 'agentic-evals-otel'
EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
"""0 every gate passed, 1 a gate failed (or a regression), 2 bad usage or input, 3 a bug in agentic_evals."""
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as a shell reports a command stopped with Ctrl-C."""
DEBUG_ENV = 'AGENTIC_EVALS_DEBUG'
"""Set to 1 to see the traceback of an internal error."""
EXIT_STATUS = (
    'exit status: 0 all gates passed, 1 a gate failed, 2 usage or input error, 3 internal error (a bug),'
    ' 130 interrupted'
)


class UsageError(AgenticEvalsError):
    """A command line that parses but cannot be acted on (exit status 2)."""


class OutputError(AgenticEvalsError):
    """Standard output cannot be written: closed, or its device is full (exit status 2)."""


class Parser(argparse.ArgumentParser):
    """An argument parser that takes no abbreviations (`--min-scor` is a typo, not `--min-score`), and whose
    usage errors name what was likely meant: an unknown flag, with the closest valid one, before any other
    problem it may have caused; at the top level, a misspelt command with the closest one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault('allow_abbrev', False)
        super().__init__(*args, **kwargs)
        self.commands: Collection[str] = ()
        """The command names, at the top level (`build_parser` sets them); its first positional is one."""
        self._arguments: list[str] = []

    def parse_known_args(self, args: Iterable[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        self._arguments = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(self._arguments, namespace)

    def error(self, message: str) -> NoReturn:
        super().error(self._mistake() or message)

    def _mistake(self) -> str | None:
        """The unknown flags among this parser's own arguments, or else an unknown command, with suggestions."""
        unknown: list[str] = []
        value_next = False
        for argument in self._arguments:
            if argument == '--':
                break
            if value_next:  # a flag's value, even one starting with '-'
                value_next = False
            elif argument.startswith('-') and len(argument) > 1 and not _NEGATIVE_NUMBER.match(argument):
                flag, equals, _ = argument.partition('=')
                # argparse offers no public list of a parser's flags
                action = self._option_string_actions.get(flag)
                if action is None:
                    unknown.append(flag)
                else:
                    value_next = action.nargs != 0 and not equals
            elif self.commands:  # the first positional at the top level is the command: the rest is its own
                if argument not in self.commands and not unknown:
                    known = ', '.join(self.commands)
                    return f'unknown command {argument}{_suggestion(argument, self.commands)}; the commands are {known}'
                break
        if not unknown:
            return None
        flags = ', '.join(f'{flag}{_suggestion(flag, self._option_string_actions)}' for flag in unknown)
        return f'unknown flag{"s" if len(unknown) > 1 else ""} {flags}'


class CommandParser(Parser):
    """A command's parser: arguments it does not know are its usage error, said with its own usage."""

    def parse_known_args(self, args: Iterable[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:  # else argparse leaves them to the top level, which knows neither the command nor its flags
            self.error(f'unrecognized arguments: {" ".join(extras)}')
        return parsed, extras


_NEGATIVE_NUMBER = re.compile(r'^-\d+$|^-\d*\.\d+$')
"""What argparse takes for a value, not a flag, when no flag looks like a number (as argparse's own test)."""


def _suggestion(word: str, valid: Iterable[str]) -> str:
    """The valid word `word` abbreviates (`--tol`: `--tolerance`), or else the one it most resembles."""
    valid = list(valid)
    abbreviated = [candidate for candidate in valid if candidate.startswith(word)]
    close = difflib.get_close_matches(word, abbreviated, n=1, cutoff=0) or difflib.get_close_matches(word, valid, n=1)
    return f' (did you mean {close[0]}?)' if close else ''


class VersionAction(argparse.Action):
    """`--version`, reading the installed version only when asked (importlib.metadata is slow to import)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        kwargs.setdefault('help', "show program's version number and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(f'{PROG} {package_version()}')
        parser.exit()


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
        return 'unknown'


# Argument types: argparse turns their ArgumentTypeError into a usage error (exit status 2).


def number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number') from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f'{text!r} is not a finite number')
    return value


def fraction(text: str) -> float:
    """A fraction in [0, 1], written `0.9` or `90%`."""
    value = _number_or_percentage(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f'expected a fraction between 0 and 1 (or a percentage), got {text!r}')
    return value


def min_score(text: str) -> MinScore:
    """`NAME=X`, X a fraction or a percentage: scores and pass rates are in [0, 1], so 1.5 could never pass."""
    from ..reports.gates import MinScore

    name, sep, threshold = text.rpartition('=')
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f'expected NAME=X (e.g. TrajectoryMatch=0.8), got {text!r}')
    value = _number_or_percentage(threshold)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(
            f'expected a threshold between 0 and 1 (or a percentage), as scores and pass rates are, got {text!r}'
        )
    return MinScore(name.strip(), value)


def max_metric(text: str) -> MaxMetric:
    """`NAME=X`, X a number >= 0: metrics are counts, costs and seconds, so a percentage means nothing here."""
    from ..reports.gates import MaxMetric

    name, sep, limit = text.rpartition('=')
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f'expected NAME=X (e.g. input_tokens=5000), got {text!r}')
    value = number(limit)
    if value < 0:
        raise argparse.ArgumentTypeError(f'expected a limit >= 0 (metrics are never negative), got {text!r}')
    return MaxMetric(name.strip(), value)


def _number_or_percentage(text: str) -> float:
    return number(text[:-1]) / 100 if text.endswith('%') else number(text)


# The gates: `run` and `render` take the same flags and build the same `Gates` from them.


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """The `gates` argument group: `--allow-failures`, `--min-score`, `--min-case-score`, `--max-fail-rate`,
    `--max-metric`, `--max-case-metric`."""
    gates = parser.add_argument_group('gates')
    gates.add_argument(
        '--allow-failures',
        action='store_true',
        help='do not fail for failed assertions, case failures or evaluator errors by themselves',
    )
    gates.add_argument(
        '--min-score',
        metavar='NAME=X',
        action='append',
        type=min_score,
        default=[],
        help='fail unless the average of score NAME (or the pass rate of assertion NAME) is at least X; repeatable',
    )
    gates.add_argument(
        '--min-case-score',
        metavar='NAME=X',
        action='append',
        type=min_score,
        default=[],
        help='fail unless every case has score NAME (or passes assertion NAME) at least X; a case without it'
        ' fails; repeatable',
    )
    gates.add_argument(
        '--max-fail-rate',
        metavar='X',
        type=fraction,
        help='fail if more than X (0..1, or N%%) of the cases have a failed assertion, an evaluator error or no result',
    )
    gates.add_argument(
        '--max-metric',
        metavar='NAME=X',
        action='append',
        type=max_metric,
        default=[],
        help='fail if the average over the cases of metric NAME (requests, input_tokens, output_tokens, cost,'
        ' ..., or duration in seconds) is above X; repeatable',
    )
    gates.add_argument(
        '--max-case-metric',
        metavar='NAME=X',
        action='append',
        type=max_metric,
        default=[],
        help='fail if any case has metric NAME above X, or did not record it; repeatable',
    )


def gates_from_args(args: argparse.Namespace, *, expected: Mapping[str, Collection[str]] | None = None) -> Gates:
    """The `Gates` the flags of `add_gate_arguments` ask for; `expected` as `Gates.expected`."""
    from ..reports.gates import Gates

    return Gates(
        args.allow_failures,
        tuple(args.min_score),
        args.max_fail_rate,
        min_case_scores=tuple(args.min_case_score),
        max_metrics=tuple(args.max_metric),
        max_case_metrics=tuple(args.max_case_metric),
        expected=expected,
    )


def tolerance(text: str) -> float:
    value = number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f'expected a tolerance >= 0, got {text!r}')
    return value


# Report files: checked before the work, written atomically after it.


def check_writable(path: Path) -> None:
    """Fail before scoring, not after it, when the report's directory is missing or its path unusable."""
    try:
        exists = path.parent.is_dir()
    except (OSError, ValueError) as e:  # a name too long, a NUL byte
        raise UsageError(f'{shown_path(path)}: cannot write: {os_reason(e)}') from None
    if not exists:
        raise UsageError(f'{path}: cannot write: directory {path.parent} does not exist')


def write_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically, as `write_chunks` does."""
    write_chunks(path, (text,))


def write_chunks(path: Path, chunks: Iterable[str]) -> None:
    """Write the text of `chunks` to `path` atomically: into a temporary file beside it, then renamed over it.

    Each chunk is encoded and written as it comes, so a report is never whole in memory. A full disk,
    an unusable name or a kill mid-write leaves the previous report whole (a kill may leave a hidden
    `.agentic-evals-otel-*.tmp` behind). A symlink is written through, as before. Anything that is not
    a regular file (`/dev/stdout`, a pipe, a device) is written to as it is: renaming over it would
    replace it with a file. Lone surrogates (text from traces) are written as backslash escapes.
    An error raised while making the chunks is raised as it is, not as a write error: a bug in a view
    stays an internal error.
    """
    source = _Chunks(chunks)
    try:
        target = Path(os.path.realpath(path))
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISREG(os.stat(target).st_mode):
                with open(target, 'wb') as file:
                    _write_all(file, source)
                return
        temp = target.parent / f'.{PROG}-{os.urandom(8).hex()}.tmp'
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_BINARY', 0), 0o666)
        try:
            with os.fdopen(descriptor, 'wb') as file:
                _write_all(file, source)
                os.fsync(file.fileno())
            _keep_mode(target, temp)
            os.replace(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    except (OSError, ValueError) as e:
        if source.failed:
            raise
        raise UsageError(f'{shown_path(path)}: cannot write: {os_reason(e)}') from None


class _Chunks:
    """The chunks as an iterator that remembers whether making them raised (then it is not a write error)."""

    def __init__(self, chunks: Iterable[str]) -> None:
        self._chunks = iter(chunks)
        self.failed = False

    def __iter__(self) -> _Chunks:
        return self

    def __next__(self) -> str:
        try:
            return next(self._chunks)
        except StopIteration:
            raise
        except BaseException:
            self.failed = True
            raise


def _write_all(file: BinaryIO, chunks: Iterable[str]) -> None:
    """Encode and write each chunk as it comes (the buffered file gathers small ones), then flush."""
    for chunk in chunks:
        file.write(chunk.encode('utf-8', 'backslashreplace'))
        del chunk  # not held while the next one is made
    file.flush()


def _keep_mode(target: Path, temp: Path) -> None:
    """A report that existed keeps its permissions (a new one gets the umask's, as `open` gives)."""
    with contextlib.suppress(OSError):
        os.chmod(temp, stat.S_IMODE(target.stat().st_mode))


def shown_path(path: Path | str, limit: int = 160) -> str:
    """`path` for a one-line message: a path thousands of characters long is shortened in the middle."""
    text = str(path)
    return text if len(text) <= limit else f'{text[: limit // 2]}...{text[-limit // 2 :]}'


# The standard streams of a command.


def say(line: str) -> None:
    """One line on stderr, which may itself be closed or broken: then nothing is said."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        print(line, file=sys.stderr, flush=True)


class GuardedStream:
    """`sys.stdout` or `sys.stderr` while a command runs, so that no way of failing to write is a traceback.

    A reader that left (`| head`, a broken pipe) ends the output quietly and leaves the exit status to
    the command: it is not a failure. A closed or full stdout raises `OutputError` once (exit status
    2); stderr's own failures are dropped, as there is nowhere left to report them. Text the
    stream's encoding cannot carry (`PYTHONIOENCODING=ascii`) is written with backslash escapes.
    """

    def __init__(self, stream: TextIO | None, name: str, *, strict: bool) -> None:
        self.stream = stream
        self.name = name
        self.strict = strict
        self.lost = False
        """Output is dropped from now on (the reader left, or a failure was reported)."""

    @property
    def encoding(self) -> str:
        return getattr(self.stream, 'encoding', None) or 'utf-8'

    def write(self, text: str) -> int:
        self._attempt(lambda stream: _write(stream, text, self.encoding))
        return len(text)

    def flush(self) -> None:
        self._attempt(lambda stream: stream.flush())

    def isatty(self) -> bool:
        try:
            return self.stream is not None and not self.lost and self.stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        if self.stream is None:
            raise OSError('it is closed')
        return self.stream.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def _attempt(self, action: Callable[[TextIO], object]) -> None:
        if self.lost:
            return
        try:
            if self.stream is None:
                raise OSError('it is closed')
            action(self.stream)
        except BrokenPipeError:
            self.lost = True
        except (OSError, ValueError) as e:  # ValueError: I/O operation on a closed file
            self.lost = True
            if self.strict:
                raise OutputError(f'{self.name}: cannot write: {os_reason(e)}') from None


def _write(stream: TextIO, text: str, encoding: str) -> None:
    try:
        stream.write(text)
    except UnicodeEncodeError:
        stream.write(text.encode(encoding, 'backslashreplace').decode(encoding))


class GuardedStreams:
    """Installs a `GuardedStream` as `sys.stdout` and `sys.stderr` for a `with` block, then restores them."""

    def __enter__(self) -> GuardedStreams:
        self.saved = sys.stdout, sys.stderr
        sys.stdout = cast(TextIO, GuardedStream(sys.stdout, 'stdout', strict=True))
        sys.stderr = cast(TextIO, GuardedStream(sys.stderr, 'stderr', strict=False))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        sys.stdout, sys.stderr = self.saved
