"""Tool-call arguments as text -> a JSON object, or the reason why not: one parser for spans and conversations.

The reasons are phrased to follow "Tool 'name' arguments ...", so evaluators can quote them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic_evals.otel.span_tree import AttributeValue

from .family import NOT_RECORDED, Arguments


def parse_arguments(raw: str | None, *, quote: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """`(arguments, None)` for a JSON object, else `(None, why)`.

    `quote` says what text is unparsable when it is exactly what the model sent (a conversation's
    arguments); otherwise the decoder's error says where the recorded text breaks.
    """
    if raw is None:
        return None, NOT_RECORDED
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        return None, unparsable(raw) if quote else f'could not be parsed as JSON: {e}'
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
    raw = next((value for key in keys if isinstance(value := attributes.get(key), str)), None)
    if raw is not None:
        parsed, problem = parse_arguments(raw)
        return Arguments(parsed, raw, problem)
    recorded = next((value for key in keys if (value := attributes.get(key)) is not None), None)
    if recorded is None:
        return None
    return Arguments(None, None, f'were recorded as {type(recorded).__name__} {recorded!r}, not as JSON text.')
