"""The instrumentation families, in the order they are asked, and what the walks read from them.

Adding a family is one module defining a `Family` subclass and one entry in `FAMILIES`: its span
descriptions are merged with those of the families sharing its markers, and every question about a
span goes to the families in this order until one answers, so list a family before the ones whose
spans it refines (pydantic-ai and ADK before the GenAI conventions they follow).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, replace
from functools import partial
from typing import Any, TypeVar

from pydantic_evals.otel.span_tree import SpanNode

from . import (
    autogen,
    dspy,
    genai,
    google_adk,
    haystack,
    langfuse,
    langsmith,
    mastra,
    openai_agents,
    openinference,
    pydantic_ai,
    strands,
    vercel_ai,
)
from .family import (
    GENERIC_CONTENT_SWITCH,
    IGNORED,
    MODEL_REQUEST,
    Answer,
    Arguments,
    Classifier,
    FailureStage,
    Family,
    IssuedCall,
    RequestFacts,
    RequestSpans,
    RunSpans,
    SpanKind,
    ToolSpans,
    not_recorded,
)
from .otel import EXCEPTION_FOLD

FAMILIES: tuple[Family, ...] = (
    vercel_ai.FAMILY,
    google_adk.FAMILY,
    strands.FAMILY,
    mastra.FAMILY,
    langsmith.FAMILY,
    openai_agents.FAMILY,
    pydantic_ai.FAMILY,
    dspy.FAMILY,
    openinference.FAMILY,
    langfuse.FAMILY,
    autogen.FAMILY,
    haystack.FAMILY,
    genai.FAMILY,
)
"""Most specific first."""


def event_folds(families: Iterable[Family]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Every family's `events` with the exception event's: event name -> (event key, span key) pairs."""
    folds: dict[str, dict[str, str]] = {name: dict(keys) for name, keys in EXCEPTION_FOLD.items()}
    for family in families:
        for name, keys in family.events.items():
            folds.setdefault(name, {}).update(keys)
    return {name: tuple(keys.items()) for name, keys in folds.items()}


EVENT_FOLDS = event_folds(FAMILIES)
"""What the trace readers copy from events onto their spans."""


def merge_tool_spans(descriptions: Iterable[ToolSpans]) -> tuple[ToolSpans, ...]:
    """One description per tool-name marker: prefixes and sets joined, keys taken where set."""
    merged: dict[str, ToolSpans] = {}
    for description in descriptions:
        known = merged.get(description.name_key)
        merged[description.name_key] = description if known is None else _joined(known, description)
    return tuple(merged.values())


def merge_request_spans(descriptions: Iterable[RequestSpans]) -> tuple[RequestSpans, ...]:
    merged: dict[str, RequestSpans] = {}
    for description in descriptions:
        known = merged.get(description.model_key)
        merged[description.model_key] = description if known is None else _joined(known, description)
    return tuple(merged.values())


def _joined(a: Any, b: Any) -> Any:
    changes: dict[str, object] = {}
    for field in fields(a):
        mine, theirs = getattr(a, field.name), getattr(b, field.name)
        if isinstance(mine, tuple):
            changes[field.name] = mine + tuple(v for v in theirs if v not in mine)
        elif isinstance(mine, frozenset):
            changes[field.name] = mine | theirs
        elif mine is None or theirs is None or mine == theirs:
            changes[field.name] = mine if theirs is None else theirs
        else:
            raise ValueError(f'{type(a).__name__} for {field.name}: {mine!r} and {theirs!r} cannot both hold')
    return replace(a, **changes)


def classify_tool_span(rule: ToolSpans, node: SpanNode, notes: list[str]) -> Answer:
    """`rule` applied to one span holding its marker (the walks apply it inline, the same way)."""
    span_name = node.name
    attributes = node.attributes
    if type(span_name) is not str or not (span_name.startswith(rule.span_prefixes) or span_name in rule.span_names):
        return None
    name = attributes[rule.name_key]
    if type(name) is not str:
        notes.append(genai.non_text_tool_name(node, rule.name_key))
        return IGNORED
    if name in rule.not_calls:
        return IGNORED
    kind: SpanKind
    message = attributes.get(rule.output_message_key) if rule.output_message_key else None
    if span_name in rule.output_span_names or (
        type(message) is str and message.startswith(rule.output_message_prefixes) and span_name not in rule.span_names
    ):
        kind = 'output'
    elif rule.deferred_key is not None and rule.deferred_key in attributes:
        kind = 'deferred'
    elif node.status == 'error':
        rejected = rule.rejected_key is not None and attributes.get(rule.rejected_key) == rule.rejected_value
        kind = 'invalid' if rejected else 'failed'
    else:
        kind = 'ok'
    return name, kind


def classify_request_span(rule: RequestSpans, node: SpanNode) -> bool:
    attributes = node.attributes
    if rule.excluded_key is not None and rule.excluded_key in attributes:
        return False
    return attributes.get(rule.operation_key) in rule.operations


def _request_step(rule: RequestSpans, node: SpanNode, notes: list[str]) -> Answer:
    """`rule` as a classifier: a model request, or not claimed."""
    return MODEL_REQUEST if classify_request_span(rule, node) else None


def _implementations(families: Sequence[Family], method: str) -> tuple[Callable[..., Any], ...]:
    """The families' answers to one question, in order; an implementation inherited by several
    families is asked once, where the family defining it stands (its last occurrence)."""
    found = [(getattr(type(f), method), getattr(f, method)) for f in families]
    default = getattr(Family, method)
    last = {function: i for i, (function, _) in enumerate(found)}
    return tuple(bound for i, (function, bound) in enumerate(found) if function is not default and last[function] == i)


class _RunAsker:
    """`agent_run` asked, in registry order, only of the families whose `RunSpans` a span matches
    (and of any family that declares none): most spans are no run, and finding that out is then one
    name look-up and one set intersection, not a question to every family."""

    __slots__ = ('_asks', '_by_key', '_by_name', '_keys', '_open', '_prefixes', '_shapes', '_suffixes')

    def __init__(self, asks: tuple[Callable[[SpanNode], str | None], ...]) -> None:
        self._asks = asks
        self._open: set[int] = set()
        self._by_name: dict[str, set[int]] = {}
        self._prefixes: list[tuple[str, int]] = []
        self._suffixes: list[tuple[str, int]] = []
        self._by_key: dict[str, tuple[dict[str, set[int]], set[int]]] = {}  # key -> (by value, any value)
        for index, ask in enumerate(asks):
            spans: RunSpans | None = getattr(getattr(ask, '__self__', None), 'run_spans', None)
            if spans is None:
                self._open.add(index)
                continue
            for name in spans.names:
                self._by_name.setdefault(name, set()).add(index)
            self._prefixes.extend((prefix, index) for prefix in spans.prefixes)
            self._suffixes.extend((suffix, index) for suffix in spans.suffixes)
            for key, values in spans.keys.items():
                by_value, any_value = self._by_key.setdefault(key, ({}, set()))
                if values is None:
                    any_value.add(index)
                for value in values or ():
                    by_value.setdefault(value, set()).add(index)
        self._keys = frozenset(self._by_key)
        self._shapes: dict[tuple[str | None, tuple[str, ...]], _Shape] = {}

    def __call__(self, node: SpanNode) -> str | None:
        name: str | None = node.name
        attributes = node.attributes
        if type(name) is not str:
            name = None  # chooses nothing, and any other type may not hash
        # What a span's name and attribute keys choose is the same for every span of one shape (a
        # framework writes each kind of span alike): worked out once per shape, and once per shape
        # and values of the keys whose value chooses.
        shape = (name, tuple(attributes))
        found = self._shapes.get(shape)
        if found is None:
            found = _remember(self._shapes, shape, self._shape(name, attributes))
        asks, valued, by_values, fixed = found
        if valued:
            values = tuple([value if type(value := attributes[key]) is str else None for key in valued])
            chosen = by_values.get(values)
            if chosen is None:
                chosen = _remember(by_values, values, self._with_values(fixed, valued, values))
            asks = chosen
        for ask in asks:
            answer = ask(node)
            if answer is not None:
                return answer
        return None

    def _shape(self, name: str | None, attributes: Mapping[str, object]) -> _Shape:
        """The families (their asks, in order) a span's name and keys choose, its keys whose value
        may choose more, and a place for what their values choose."""
        chosen = set(self._open)
        if name is not None:
            chosen.update(self._by_name.get(name, ()))
            chosen.update(index for prefix, index in self._prefixes if name.startswith(prefix))
            chosen.update(index for suffix, index in self._suffixes if name.endswith(suffix))
        valued = []
        for key in sorted(self._keys.intersection(attributes)):
            by_value, any_value = self._by_key[key]
            chosen |= any_value
            if by_value:
                valued.append(key)
        return tuple(self._asks[i] for i in sorted(chosen)), tuple(valued), {}, frozenset(chosen)

    def _with_values(self, fixed: frozenset[int], valued: tuple[str, ...], values: tuple[str | None, ...]) -> _Asks:
        chosen = set(fixed)
        for key, value in zip(valued, values, strict=True):
            if value is not None:
                chosen.update(self._by_key[key][0].get(value, ()))
        return tuple(self._asks[i] for i in sorted(chosen))


_V = TypeVar('_V')
_Asks = tuple[Callable[[SpanNode], 'str | None'], ...]
_Shape = tuple[_Asks, tuple[str, ...], dict[tuple['str | None', ...], _Asks], frozenset[int]]


_SHAPES_KEPT = 4096
"""Span shapes a memo keeps what it worked out for (a bound on memory for traces of many shapes; a
trace of one framework has a few dozen)."""


def _remember(memo: dict[Any, Any], key: object, value: _V) -> _V:
    """`value` kept in `memo` under `key`; a full memo starts again."""
    if len(memo) >= _SHAPES_KEPT:
        memo.clear()
    memo[key] = value
    return value


def _first(askers: tuple[Callable[..., Any], ...], *args: Any) -> Any:
    for ask in askers:
        answer = ask(*args)
        if answer is not None:
            return answer
    return None


class Registry:
    """What the walks and the record builders ask, compiled from a tuple of families."""

    def __init__(self, families: Sequence[Family]) -> None:
        self.families = tuple(families)
        self.tool_rules = merge_tool_spans(f.tool_spans for f in families if f.tool_spans is not None)
        self.request_rules = merge_request_spans(f.request_spans for f in families if f.request_spans is not None)
        self.call_classifiers: tuple[tuple[str, Classifier], ...] = _classifiers(f.call_classifiers() for f in families)
        self.request_classifiers = _classifiers(f.request_classifiers() for f in families)
        self._rest_classifiers = self.call_classifiers + self.request_classifiers
        self.rest_markers: tuple[str, ...] = tuple(
            dict.fromkeys(
                [
                    *(rule.name_key for rule in self.tool_rules[1:]),
                    *(rule.model_key for rule in self.request_rules[1:]),
                    *(marker for marker, _ in self._rest_classifiers),
                ]
            )
        )
        """Every key `classify_rest` looks for: a span holding none of them is not classified there,
        so the walks skip the call for it (an agent run, a case span)."""
        self._rest_plan: tuple[tuple[str, Classifier], ...] = (
            *((rule.name_key, partial(classify_tool_span, rule)) for rule in self.tool_rules[1:]),
            *((rule.model_key, partial(_request_step, rule)) for rule in self.request_rules[1:]),
            *self._rest_classifiers,
        )
        self._rest_steps: dict[tuple[str, ...], tuple[Classifier, ...]] = {}
        self._asked = {
            method: _implementations(self.families, method)
            for method in (
                'call_id',
                'arguments',
                'result',
                'failure_stage',
                'usage',
                'request_facts',
                'issued_call_ids',
                'issued_calls',
                'issued',
                'issued_texts',
                'issue_positions',
                'starts_in_issue_order',
                'agent_run',
                'run_prompt',
                'span_prompt',
                'run_output',
                'response_text',
            )
        }
        self._agent_run = self._asked['agent_run']
        self.agent_run = _RunAsker(self._agent_run)
        """The agent's name when a span is an agent run, else `None`."""
        self.switching = tuple(f for f in self.families if f.content_switch is not None)
        """The families with a `content_switch`, in registry order."""
        # A family that recognises spans by its marker keys and names alone answers alike for every
        # span of one shape (name and keys): `Switches` keeps those answers per shape, here, since
        # they hold for every trajectory; the other families are asked each time.
        by_markers = [type(f).recognises is Family.recognises for f in self.switching]
        self._switching_by_markers = tuple(i for i, alone in enumerate(by_markers) if alone)
        self._switching_asked = tuple(i for i, alone in enumerate(by_markers) if not alone)
        self._switching_by_shape: dict[tuple[str | None, tuple[str, ...]], int] = {}
        self._arguments = self._asked['arguments']
        self._in_order = tuple(
            f.starts_in_issue_order
            for f in self.families
            if type(f).starts_in_issue_order is not Family.starts_in_issue_order
        )
        self._losing = tuple(f for f in self.families if type(f).loses_parent_run is not Family.loses_parent_run)

    def families_in(self, nodes: Iterable[SpanNode], families: Sequence[Family] | None = None) -> list[str]:
        """The names of the families (of `families`, every one by default) that recognise at least
        one of `nodes`, in registry order."""
        asked = self.families if families is None else tuple(families)
        found: set[str] = set()
        for node in nodes:
            for family in asked:
                if family.name not in found and family.recognises(node):
                    found.add(family.name)
            if len(found) == len(asked):
                break
        return [family.name for family in asked if family.name in found]

    # -- classification off the walks' inline path ---------------------------------------------

    def classify_rest(self, node: SpanNode, notes: list[str]) -> Answer:
        """A span that the first tool and request descriptions did not claim: the other
        descriptions, then the classifiers, in order, each asked when the span holds its marker
        (which of them that is, is worked out once per set of attribute keys)."""
        attributes = node.attributes
        keys = tuple(attributes)
        steps = self._rest_steps.get(keys)
        if steps is None:
            steps = _remember(self._rest_steps, keys, tuple(step for key, step in self._rest_plan if key in attributes))
        for step in steps:
            answer = step(node, notes)
            if answer is not None:
                return answer
        return None

    def is_model_request(self, node: SpanNode) -> bool:
        """Whether `node` is a model request, by the same rules as the walks."""
        attributes = node.attributes
        for rule in self.request_rules:
            if rule.model_key in attributes and classify_request_span(rule, node):
                return True
        return any(
            marker in attributes and classify(node, []) is MODEL_REQUEST
            for marker, classify in self.request_classifiers
        )

    @property
    def has_rest(self) -> bool:
        return (
            len(self.tool_rules) > 1
            or len(self.request_rules) > 1
            or bool(self.call_classifiers + self.request_classifiers)
        )

    # -- tool calls ----------------------------------------------------------------------------

    def call_id(self, node: SpanNode) -> str | None:
        answer: str | None = _first(self._asked['call_id'], node)
        return answer

    def arguments(self, node: SpanNode) -> Arguments:
        for ask in self._arguments:  # `_first`, inlined: asked for every checked call
            answer: Arguments | None = ask(node)
            if answer is not None:
                return answer
        return NOT_RECORDED_ANYWHERE

    def not_recorded(self, node: SpanNode) -> Arguments:
        """`NOT_RECORDED_ANYWHERE` naming the content switch that records arguments (`Switches`)."""
        return Switches(self).not_recorded(node)

    def model_spans_advice(self, nodes: Iterable[SpanNode]) -> str | None:
        """What the families recognised in `nodes` advise when no model-request span was recorded."""
        return self._advice(nodes, 'model_spans_advice')

    def _advice(self, nodes: Iterable[SpanNode], attribute: str) -> str | None:
        advising = [f for f in self.families if getattr(f, attribute) is not None]
        found = set(self.families_in(nodes, advising))
        return next((getattr(f, attribute) for f in advising if f.name in found), None)

    def result(self, node: SpanNode) -> str | None:
        answer: str | None = _first(self._asked['result'], node)
        return answer

    def failure_stage(self, node: SpanNode) -> FailureStage:
        answer: FailureStage | None = _first(self._asked['failure_stage'], node)
        return genai.failure_stage_from_result(self.result(node)) if answer is None else answer

    # -- model requests ------------------------------------------------------------------------

    def usage(self, node: SpanNode) -> dict[str, int | float]:
        answer: dict[str, int | float] | None = _first(self._asked['usage'], node)
        return {} if answer is None else answer

    def request_facts(self, node: SpanNode) -> RequestFacts:
        usage = self.usage(node)
        answer: RequestFacts | None = _first(self._asked['request_facts'], node, usage)
        if answer is None:
            answer = RequestFacts(None, genai.CHAT, 0, 0, 0, 0, None)
        return answer

    def issued_call_ids(self, node: SpanNode) -> list[str]:
        answer: list[str] | None = _first(self._asked['issued_call_ids'], node)
        if answer is None:
            return [c.call_id for c in self.issued(node) if c.call_id is not None]
        return answer

    def issued_calls(self, node: SpanNode) -> list[tuple[str, str]]:
        answer: list[tuple[str, str]] | None = _first(self._asked['issued_calls'], node)
        if answer is None:
            return [(c.call_id, c.name) for c in self.issued(node) if c.call_id is not None]
        return answer

    def issued(self, node: SpanNode) -> list[IssuedCall]:
        """The calls `node`'s response issued, with arguments where recorded (empty when none); a
        family that lists only ids and names (`issued_calls`) gives calls without arguments."""
        answer: list[IssuedCall] | None = _first(self._asked['issued'], node)
        if answer is None:
            pairs: list[tuple[str, str]] | None = _first(self._asked['issued_calls'], node)
            return [] if pairs is None else [IssuedCall(call_id, name, None) for call_id, name in pairs]
        return answer

    def issued_texts(self, nodes: Sequence[SpanNode]) -> list[str | None]:
        """Each response's issued-call text, from the first family that has one for it."""
        texts: list[str | None] | None = None
        for ask in self._asked['issued_texts']:
            found: list[str | None] | None = ask(nodes)
            if found is not None and texts is None:
                texts = found
            elif found is not None and texts is not None:
                texts = [a if a is not None else b for a, b in zip(texts, found, strict=True)]
        return [None] * len(nodes) if texts is None else texts

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int]:
        answer: dict[str | None, int] | None = _first(self._asked['issue_positions'], node, call_ids)
        if answer is None:
            answer = {call_id: position for position, call_id in enumerate(self.issued_call_ids(node))}
        return answer

    # -- runs ----------------------------------------------------------------------------------

    def starts_in_issue_order(self, node: SpanNode) -> bool:
        for ask in self._in_order:  # noqa: SIM110  # a loop: asked for every call of a multi-call response
            if ask(node):
                return True
        return False

    @property
    def in_order_check(self) -> Callable[[SpanNode], bool]:
        """`starts_in_issue_order`, as the one family's method when one family answers it (a call less per span)."""
        return self._in_order[0] if len(self._in_order) == 1 else self.starts_in_issue_order

    def loses_parent_run(self, agent: SpanNode) -> bool:
        return any(family.loses_parent_run(agent) for family in self._losing)

    def run_prompt(self, agent: SpanNode) -> str | None:
        answer: str | None = _first(self._asked['run_prompt'], agent)
        return answer

    def span_prompt(self, node: SpanNode) -> str | None:
        answer: str | None = _first(self._asked['span_prompt'], node)
        return answer

    def run_output(self, agent: SpanNode) -> object:
        answer: object = _first(self._asked['run_output'], agent)
        return answer

    def response_text(self, node: SpanNode) -> str | None:
        answer: str | None = _first(self._asked['response_text'], node)
        return answer


NOT_RECORDED_ANYWHERE = Arguments(None, None, not_recorded(GENERIC_CONTENT_SWITCH))
"""What `Registry.arguments` answers for a span no family recorded arguments on (`Registry.not_recorded`
names the switch)."""


class Switches:
    """Why a call has no arguments, naming the content switch of the first family (in registry order)
    that recognises its span or a span around it (a pydantic-ai tool span is a plain GenAI one; its
    agent run says whose it is). What each ancestor span was found to be is kept, since sibling calls
    share theirs: one per trajectory, asked only of the calls a record is made for."""

    _DEPTH = 64

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._switching = registry.switching
        self._around: dict[int, int] = {}  # span -> the first switching family of it and its ancestors

    def not_recorded(self, node: SpanNode) -> Arguments:
        around = self._of_ancestors(node.parent)
        first = self._first(node, around)  # only a family ahead of the one around it can change it
        switch = self._switching[first].content_switch if first < len(self._switching) else None
        return Arguments(None, None, not_recorded(switch or GENERIC_CONTENT_SWITCH))

    def _first(self, node: SpanNode, below: int) -> int:
        """The first of the families before `below` that recognises `node`, else `below`."""
        switching, registry = self._switching, self._registry
        name = node.name
        shape = (name if type(name) is str else None, tuple(node.attributes))
        by_markers = registry._switching_by_shape.get(shape)
        if by_markers is None:
            first = next((i for i in registry._switching_by_markers if switching[i].recognises(node)), len(switching))
            by_markers = _remember(registry._switching_by_shape, shape, first)
        below = min(below, by_markers)
        return next((i for i in registry._switching_asked if i < below and switching[i].recognises(node)), below)

    def _of_ancestors(self, node: SpanNode | None) -> int:
        """Iterative, at most `_DEPTH` spans up (a parent cycle in a hand-built tree ends there)."""
        chain: list[SpanNode] = []
        found = len(self._switching)
        while node is not None and len(chain) < self._DEPTH:
            known = self._around.get(id(node))
            if known is not None:
                found = known
                break
            chain.append(node)
            node = node.parent
        for span in reversed(chain):
            found = self._first(span, found)
            self._around[id(span)] = found
        return found


def _classifiers(tables: Iterable[Mapping[str, Classifier]]) -> tuple[tuple[str, Classifier], ...]:
    return tuple(entry for table in tables for entry in table.items())


REGISTRY = Registry(FAMILIES)
"""The registry every walk, record and run question uses."""
