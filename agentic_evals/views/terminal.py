"""The rich console every command prints through, and how it prints text from data and the verdict.

Views build their cells from data with `data_text` (escaped, never parsed as markup). The console
itself is the safety net for anything that slips through: markup and emoji codes are off, and a
render hook escapes control characters in whatever is printed, so no trace can style, move or
retitle the user's terminal. When the output is not a terminal, the same hook strips the padding
rich leaves at the ends of lines, so a report piped to a file has no trailing spaces.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import IO

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook, RenderResult
from rich.segment import Segment
from rich.text import Text

from .text import one_line, visible

NON_TTY_WIDTH = 120
"""Width when output is not a terminal and `COLUMNS` is unset (rich would use 80)."""


def make_console(file: IO[str]) -> Console:
    """A rich console for `file`: terminal width on a TTY, else `COLUMNS` or `NON_TTY_WIDTH`."""
    width = None if file.isatty() or os.environ.get('COLUMNS') else NON_TTY_WIDTH
    console = Console(file=file, width=width, highlight=False, markup=False, emoji=False)
    console.push_render_hook(_Shown.hook(strip=not console.is_terminal))
    return console


def data_text(text: str, style: str = '') -> Text:
    """A table cell or label from data: escaped (`visible`), literal, optionally styled."""
    return Text(visible(text), style=style)


def print_verdict(console: Console, summary: str, *, passed: bool) -> None:
    """The one-line verdict: wrapped at word boundaries on a terminal, one line (for grep) otherwise."""
    text = Text(one_line(summary), style='bold green' if passed else 'bold red')
    console.print(text, soft_wrap=not console.is_terminal)


class _Shown:
    """A renderable printed with control characters escaped and, when `strip`, no trailing spaces."""

    def __init__(self, renderable: ConsoleRenderable, *, strip: bool) -> None:
        self.renderable = renderable
        self.strip = strip

    @staticmethod
    def hook(*, strip: bool) -> RenderHook:
        class Hook(RenderHook):
            def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
                return [_Shown(r, strip=strip) for r in renderables]

        return Hook()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        segments = console.render(self.renderable, options)
        width = options.max_width
        for line, newline in _lines(segments):
            # An escape is wider than the character it shows, and rich crops lines to the width after
            # this: fold a line it made too long rather than lose its end.
            length = Segment.get_line_length(line)
            fold = length > width and not options.no_wrap  # `soft_wrap` lines are neither cropped nor folded
            pieces = Segment.divide(line, range(width, length + width, width)) if fold else [line]
            for index, piece in enumerate(pieces):
                if index:
                    yield Segment.line()
                yield from _rstrip(piece) if self.strip else piece
            if newline:
                yield Segment.line()


def _lines(segments: Iterable[Segment]) -> Iterator[tuple[list[Segment], bool]]:
    """The segments split into lines, text escaped: (segments of the line, whether a newline ends it)."""
    line: list[Segment] = []
    for segment in segments:
        if segment.control:
            line.append(segment)
            continue
        for index, part in enumerate(segment.text.split('\n')):
            if index:
                yield line, True
                line = []
            if part:
                line.append(Segment(visible(part), segment.style))
    if line:
        yield line, False


def _rstrip(line: list[Segment]) -> list[Segment]:
    while line and not line[-1].control and not line[-1].text.rstrip():
        line = line[:-1]
    if line and not line[-1].control:
        last = line[-1]
        line = [*line[:-1], Segment(last.text.rstrip(), last.style)]
    return line
