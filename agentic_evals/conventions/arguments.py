"""Tool-call arguments as text -> a JSON object, or the reason why not: one parser for spans and conversations.

The reasons are phrased to follow "Tool 'name' arguments ...", so evaluators can quote them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic_evals.otel.span_tree import AttributeValue

from .family import NOT_RECORDED, Arguments

MAX_DEPTH = 200
"""JSON nested deeper than this is refused as text from a trace: deeper than any real tool call or
message, and shallow enough that comparing and printing it stays far from the recursion limit."""

TOO_DEEP = f'nested too deeply (more than {MAX_DEPTH} levels)'

_scan_once: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
"""The scanner `json.loads` uses without options (a decoder made with the defaults)."""


def load_json(text: str | bytes) -> Any:
    """`json.loads`, but JSON nested more than `MAX_DEPTH` levels is a `ValueError`, never a
    `RecursionError`: a recorded value must not be able to crash an evaluation."""
    if isinstance(text, bytes):
        brackets = text.count(b'[') + text.count(b'{')
    else:
        brackets = text.count('[') + text.count('{')
        if brackets <= MAX_DEPTH:
            # `json.loads` of text with no whitespace around the value is its decoder's scanner at
            # 0 reaching the end: called directly, without the Python layers around it (most of
            # the time of a small object). Anything else, errors included, goes to `json.loads`.
            try:
                value, end = _scan_once(text, 0)
            except (StopIteration, ValueError):
                return json.loads(text)
            return value if end == len(text) else json.loads(text)
    if brackets <= MAX_DEPTH:
        return json.loads(text)  # too few brackets to nest too deeply: the common case, unchecked
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None
    if too_deep(value):
        raise ValueError(TOO_DEEP)
    return value


def too_deep(value: object) -> bool:
    """Whether lists and dicts in `value` nest more than `MAX_DEPTH` levels (an iterative walk)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_arguments(raw: str | None, *, quote: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """`(arguments, None)` for a JSON object, else `(None, why)`.

    `quote` says what text is unparsable when it is exactly what the model sent (a conversation's
    arguments); otherwise the decoder's error says where the recorded text breaks.
    """
    if raw is None:
        return None, NOT_RECORDED
    try:
        value = load_json(raw)
    except json.JSONDecodeError as e:
        return None, unparsable(raw) if quote else f'could not be parsed as JSON: {e}'
    except ValueError as e:  # nested too deeply
        return None, f'could not be parsed as JSON: {e}'
    if not isinstance(value, dict):
        return None, f'are not a JSON object: {value!r}'
    return value, None


def unparsable(text: str) -> str:
    """Why arguments the model sent as `text` are not an object."""
    return f'could not be parsed as JSON: the model sent {text!r}'


def recorded_arguments(attributes: Mapping[str, AttributeValue], keys: tuple[str, ...]) -> Arguments | None:
    """The arguments in the first of `keys` holding text, parsed; `None` when no key is present.

    OTel attributes hold scalars and scalar sequences, so arguments recorded as anything but the JSON
    text the conventions say are reported as such rather than guessed at.
    """
    for key in keys:  # a loop, not `next` over a generator: asked for every checked call
        raw = attributes.get(key)
        if isinstance(raw, str):
            parsed, problem = parse_arguments(raw)
            return Arguments(parsed, raw, problem)
    recorded = next((value for key in keys if (value := attributes.get(key)) is not None), None)
    if recorded is None:
        return None
    return Arguments(None, None, f'were recorded as {type(recorded).__name__} {recorded!r}, not as JSON text.')


def dump_json(value: Any) -> str:
    """A parsed value back to compact JSON text (what a response recorded as an object is compared as)."""
    return json.dumps(value, separators=(',', ':'), ensure_ascii=False, default=str)


def json_or_none(raw: object) -> Any:
    """`raw` parsed (depth-limited, as `load_json`) when it is JSON text, else `None`: what a recorded
    attribute holds, for a reader that only wants it when it parses."""
    if not isinstance(raw, str):
        return None
    try:
        return load_json(raw)
    except ValueError:
        return None
