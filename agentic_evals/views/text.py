"""Text from data (tool names, arguments, results, reasons, case, dataset and evaluator names) made safe to show.

Traces and datasets come from anywhere, so their text must never reach a terminal or a report as
something active: an escape sequence that rewrites the screen (`\\x1b]0;title\\x07`, `\\x1b[2J`), a
carriage return that overwrites a line, a bidirectional override that reorders it, or a lone
surrogate that no encoding can write. `visible` turns each such character into its Python-style
escape (`\\x1b`, `\\u202e`, `\\ud800`), so the text stays readable and nothing is dropped. Every
view (terminal, Markdown, JUnit) passes data through it; markup (rich, Markdown) is then escaped by
the view, because only the view knows its syntax.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL and C1 controls, bidirectional embeddings, overrides and
# isolates, lone surrogates, and the two noncharacters XML 1.0 cannot carry.
_HIDDEN = re.compile('[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]')
_HIDDEN_OR_NEWLINE = re.compile(f'\n|{_HIDDEN.pattern}')


_NAMED = {'\n': '\\n', '\r': '\\r'}


def _escape(match: re.Match[str]) -> str:
    char = match[0]
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f'\\x{code:02x}' if code < 0x100 else f'\\u{code:04x}'


def visible(text: str, *, newlines: bool = True) -> str:
    """`text` with every control, bidi and surrogate character escaped; newlines kept unless `newlines=False`."""
    return (_HIDDEN if newlines else _HIDDEN_OR_NEWLINE).sub(_escape, text)


def one_line(text: str) -> str:
    """`visible(text)` on one line: newlines escaped too (a verdict, an error message)."""
    return visible(text, newlines=False)
