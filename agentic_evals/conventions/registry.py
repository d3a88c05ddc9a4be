"""The instrumentation families, in the order they are asked, and the tables the walks read.

Adding a family is one module defining a `Family` subclass and one entry in `FAMILIES`. A family
that extends another (pydantic-ai and ADK extend the GenAI conventions) lists before it and
overrides only what differs: what it inherits is asked of the family it extends, in that
family's place, so a span goes to the most specific family that claims it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode

from . import genai, google_adk, pydantic_ai
from .family import MODEL_REQUEST, Classifier, Family

FAMILIES: tuple[Family, ...] = (google_adk.FAMILY, pydantic_ai.FAMILY, genai.FAMILY)
"""Most specific first: a span is read by the first family whose classifier claims it."""

Chain = tuple[tuple[Classifier, Family], ...]
"""The classifiers for spans holding one marker, in the order they are tried, with their family."""


def _chains(tables: Iterable[tuple[Family, Mapping[str, Classifier]]]) -> tuple[tuple[str, Chain], ...]:
    by_marker: dict[str, list[tuple[Classifier, Family]]] = {}
    for family, table in tables:
        for marker, classify in table.items():
            by_marker.setdefault(marker, []).append((classify, family))
    return tuple((marker, _last_of_each(chain)) for marker, chain in by_marker.items())


def _function(method: Callable[..., Any]) -> object:
    return getattr(method, '__func__', method)


def _last_of_each(chain: list[tuple[Classifier, Family]]) -> Chain:
    """One entry per implementation, where the family that defines it stands (its last occurrence)."""
    last = {_function(classify): i for i, (classify, _) in enumerate(chain)}
    return tuple(entry for i, entry in enumerate(chain) if last[_function(entry[0])] == i)


MARKERS: tuple[tuple[str, Chain], ...] = _chains(
    [(f, f.call_classifiers()) for f in FAMILIES] + [(f, f.request_classifiers()) for f in FAMILIES]
)
"""Marker attribute -> classifiers, call markers first: the full walk offers a span to the chain of
each marker it holds, in this order, until one classifier claims it."""

REQUEST_MARKERS: tuple[tuple[str, Chain], ...] = _chains([(f, f.request_classifiers()) for f in FAMILIES])
"""The same for model requests alone, for walks that only count requests."""


def _asked(method: str) -> tuple[Callable[..., Any], ...]:
    """The distinct implementations of a run question, bound to the family that defines each."""
    found = [(getattr(type(f), method), getattr(f, method)) for f in FAMILIES]
    default = getattr(Family, method)
    last = {function: i for i, (function, _) in enumerate(found)}
    return tuple(bound for i, (function, bound) in enumerate(found) if function is not default and last[function] == i)


def _first(askers: tuple[Callable[[SpanNode], Any], ...], node: SpanNode) -> Any:
    for ask in askers:
        answer = ask(node)
        if answer is not None:
            return answer
    return None


_AGENT_RUN = _asked('agent_run')
_RUN_PROMPT = _asked('run_prompt')
_SPAN_PROMPT = _asked('span_prompt')
_RUN_OUTPUT = _asked('run_output')


def agent_run(node: SpanNode) -> str | None:
    """The agent's name when `node` is an agent run (per the first family that says so), else `None`."""
    for ask in _AGENT_RUN:
        name: str | None = ask(node)
        if name is not None:
            return name
    return None


def run_prompt(agent: SpanNode) -> str | None:
    """The user prompt recorded on an agent-run span."""
    result: str | None = _first(_RUN_PROMPT, agent)
    return result


def span_prompt(node: SpanNode) -> str | None:
    """The user prompt recorded on any span (a model request's input messages)."""
    result: str | None = _first(_SPAN_PROMPT, node)
    return result


def run_output(agent: SpanNode) -> object:
    """The output recorded on an agent-run span, or `None`."""
    result: object = _first(_RUN_OUTPUT, agent)
    return result


def request_family(node: SpanNode) -> Family | None:
    """The family that reads `node` as a model request, or `None` when it is not one."""
    attributes = node.attributes
    for marker, chain in REQUEST_MARKERS:
        if marker in attributes:
            for classify, family in chain:
                if classify(node, []) is MODEL_REQUEST:
                    return family
    return None
