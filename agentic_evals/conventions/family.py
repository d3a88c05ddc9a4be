"""What an instrumentation family tells the extraction: the interface every family module implements.

A family describes its tool spans and model-request spans as data (`ToolSpans`, `RequestSpans`):
the registry merges the descriptions of every family sharing a marker attribute, and the walk,
which every evaluation pays for, applies them inline. Spans data cannot describe go to a family's
classifiers (`call_classifiers`, `request_classifiers`): one call per span holding the marker.

Everything else is asked only for what a record or a judge reads, of every family in registry
order, and the first answer that is not `None` wins: a family answers only about what it recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Final, Literal, NamedTuple

from pydantic_evals.otel.span_tree import SpanNode

CallKind = Literal['ok', 'failed', 'deferred', 'output']
"""A tool call's status, with output functions apart: what selection needs to know."""

FailureStage = Literal['validation', 'retry', 'raised']
"""Where a failed attempt failed: its arguments did not validate, the tool asked the model to
retry (`ModelRetry`), or the tool raised any other exception."""

SpanKind = CallKind | Literal['invalid']
"""What a classifier says a tool call attempt is. `'invalid'` is a failed attempt the framework
rejected before running anything (pydantic-ai validates every call of a response first), so its
span may start before the calls the model issued ahead of it; the walk then restores issue order."""


class Role(Enum):
    """A classifier's answer for a span that is not a tool call attempt."""

    IGNORED = 'ignored'
    """Nothing to extract: a summary or wrapper of calls that have spans of their own."""
    MODEL_REQUEST = 'model request'
    """One request to a model: its tokens and cost are counted, once."""


IGNORED: Final = Role.IGNORED
MODEL_REQUEST: Final = Role.MODEL_REQUEST

Part = tuple[SpanNode, str, SpanKind]
"""One of several calls a single span ran: `(span, tool name, kind)`, where the span is one the family
made for that call alone (a child of the span that ran them, holding only that call's share of what it
recorded), so every question about the call is asked of its own span."""

Answer = tuple[str, SpanKind] | list[Part] | Role | None
"""`(tool name, kind)` for a tool call attempt, the calls of a span that ran several (`Part`), a
`Role`, or `None`: not this family's span."""

Classifier = Callable[[SpanNode, list[str]], Answer]
"""Classifies a span holding the classifier's marker; appends to the list why it skipped a span
that looked like a call but cannot be read."""


@dataclass(frozen=True)
class ToolSpans:
    """Which spans holding `name_key` (a text tool name) are tool call attempts, and of what kind.

    A span is a call when its name starts with one of `span_prefixes` or is one of `span_names`;
    then, in this order: a tool name in `not_calls` marks a summary (no call), a span name in
    `output_span_names`, or an `output_message_key` value starting with `output_message_prefixes` on
    a span matched by prefix, an output function (a name in `span_names` is decided by the name
    alone, as the built-ins decide pydantic-ai's `running tool`), `deferred_key` a deferred call,
    an error status a failed attempt (`'invalid'` when `rejected_key` holds `rejected_value`),
    anything else a call that ran. Families declaring the same `name_key` are merged (the sets
    joined; the keys must agree where both set one).
    """

    name_key: str
    span_prefixes: tuple[str, ...] = ()
    span_names: frozenset[str] = frozenset()
    not_calls: frozenset[str] = frozenset()
    output_span_names: frozenset[str] = frozenset()
    output_message_key: str | None = None
    output_message_prefixes: tuple[str, ...] = ()
    deferred_key: str | None = None
    rejected_key: str | None = None
    rejected_value: str | None = None


@dataclass(frozen=True)
class RequestSpans:
    """Which spans holding `model_key` are model requests: `operation_key` is one of `operations`,
    and the span holds no `excluded_key` (a tool span that carries a model is not a request)."""

    model_key: str
    operation_key: str
    operations: frozenset[str]
    excluded_key: str | None = None


@dataclass(frozen=True)
class RunSpans:
    """What every agent-run span of a family holds, one of: a key with one of its values (`None`: any
    value), a span name, a span-name prefix or suffix. The registry asks `agent_run` only of spans
    that may be a run, and most spans are not: a look-up or two instead of every family's question."""

    keys: Mapping[str, frozenset[str] | None] = field(default_factory=dict)
    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()


class Arguments(NamedTuple):
    """A call's arguments as recorded: parsed to an object, or why not."""

    parsed: dict[str, Any] | None
    raw: str | None
    """The text as recorded (`None` when none was)."""
    problem: str | None
    """Why `parsed` is `None`, phrased to follow "arguments"; `None` when parsed."""


class RequestFacts(NamedTuple):
    """What one model-request span says about the request."""

    model: str | None
    operation: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float | None


class IssuedCall(NamedTuple):
    """One tool call as a model response issued it: the other source of what an agent did, beside
    the tool span that ran it (extraction joins the two by call id, else by place in the response)."""

    call_id: str | None
    name: str
    arguments: str | None
    """The arguments as the model wrote them (JSON text), `None` when the response does not record them."""


NOT_RECORDED = 'not available in span (`include_content` may be disabled).'
"""Why a pydantic-ai call has no arguments when none were recorded (its content capture off)."""

GENERIC_CONTENT_SWITCH = 'content capture may be off, or this instrumentation never records them'
"""What a span of no family with its own `content_switch` says about arguments it does not hold."""


def not_recorded(switch: str) -> str:
    """Why a call has no arguments, naming the setting that records them."""
    return f'not available in span ({switch}).'


class Family:
    """An instrumentation family: set the descriptions and override the questions it can answer.

    Subclass it in one module per family and add the instance to `registry.FAMILIES`. Every question
    defaults to `None` ("not recorded here"), so a family answers only about spans it recognises.
    """

    name: str = 'family'
    tool_spans: ToolSpans | None = None
    request_spans: RequestSpans | None = None
    markers: tuple[str, ...] = ()
    """Attribute keys only this family's spans hold: a span with one is recognised as the family's
    (what `inspect` names); a family whose markers need a value check overrides `recognises`."""
    marker_spans: frozenset[str] = frozenset()
    """Span names only this family uses (as `markers`)."""
    content_switch: str | None = None
    """The setting that makes this instrumentation record arguments and messages (quoted in the
    reason a call's arguments are missing, and in the trace's account), when it has one."""
    model_spans_advice: str | None = None
    """What to do when this family's trace records no model-request span (quoted when a budget on
    requests, tokens or cost cannot be measured)."""
    run_spans: ClassVar[RunSpans | None] = None
    """What this family's agent-run spans hold (`RunSpans`), when it answers `agent_run`; `None`: no
    such promise, so every span is asked."""
    events: ClassVar[Mapping[str, Mapping[str, str]]] = {}
    """Event name -> {event attribute: span attribute}: what the trace readers copy from a span's
    events onto the span (`SpanNode` has no events), for a family that records content in events.
    A span's own attribute, or an earlier event's, is never overwritten."""

    def recognises(self, node: SpanNode) -> bool:
        """Whether `node` is one of this family's spans (not asked by the walks: `inspect` names them)."""
        attributes = node.attributes
        name = node.name
        return (type(name) is str and name in self.marker_spans) or any(key in attributes for key in self.markers)

    # -- classification beyond the descriptions (slower: one call per span holding the marker) --

    def call_classifiers(self) -> Mapping[str, Classifier]:
        """Marker attribute -> classifier of spans the descriptions did not claim."""
        return {}

    def request_classifiers(self) -> Mapping[str, Classifier]:
        """Marker attribute -> classifier answering `MODEL_REQUEST` or `None`; it must never accept a
        span a call classifier claims (requests are also counted by a walk that skips calls)."""
        return {}

    # -- tool calls ----------------------------------------------------------------------------

    def call_id(self, node: SpanNode) -> str | None:
        return None

    def arguments(self, node: SpanNode) -> Arguments | None:
        return None

    def result(self, node: SpanNode) -> str | None:
        return None

    def failure_stage(self, node: SpanNode) -> FailureStage | None:
        """Asked of failed attempts only."""
        return None

    # -- model requests ------------------------------------------------------------------------

    def usage(self, node: SpanNode) -> dict[str, int | float] | None:
        """Token counts and cost by pydantic-evals' metric names (`input_tokens`, `cost`, ...)."""
        return None

    def request_facts(self, node: SpanNode, usage: Mapping[str, int | float]) -> RequestFacts | None:
        """Model, operation, tokens and cost; the tokens should be `usage`'s, so both count alike."""
        return None

    def issued_call_ids(self, node: SpanNode) -> list[str] | None:
        """The ids of the tool calls a model response issued, in the order the model issued them."""
        return None

    def issued_calls(self, node: SpanNode) -> list[tuple[str, str]] | None:
        """(call id, tool name) of each call a model response issued, in issue order: how a call
        whose span records no id gets one (its place among the response's calls of its name)."""
        return None

    def issued(self, node: SpanNode) -> list[IssuedCall] | None:
        """Every call a model response issued, in issue order, with its arguments where recorded;
        `None` when `node` is not this family's model response (or records no output)."""
        return None

    def issued_texts(self, nodes: Sequence[SpanNode]) -> list[str | None] | None:
        """For each response, the recorded text in which its issued call ids appear, each quoted,
        when they are made of characters JSON writes as themselves (`None` for one that issued
        nothing): lets an id be searched for across all responses at once instead of parsing each."""
        return None

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int] | None:
        """Call id -> a number ordering the ids as the response issued them (faster than parsing)."""
        return None

    # -- runs ----------------------------------------------------------------------------------

    def agent_run(self, node: SpanNode) -> str | None:
        """The agent's name when `node` is one agent run."""
        return None

    def starts_in_issue_order(self, node: SpanNode) -> bool:
        """Whether this tool-call span is one of a framework that starts the spans of a response's
        calls one after another in the order the response issued them (so strictly increasing start
        times are issue order, and the response need not be read). Frameworks that run calls as
        tasks, threads or with millisecond clocks say no (the default)."""
        return False

    def loses_parent_run(self, agent: SpanNode) -> bool:
        """Whether this agent-run span may hang from the trace's root although it ran inside a tool
        call (OpenLLMetry's sub-agents do): the agent structure then nests it in that call."""
        return False

    def run_prompt(self, agent: SpanNode) -> str | None:
        """The user prompt recorded on an agent-run span."""
        return None

    def span_prompt(self, node: SpanNode) -> str | None:
        """The first user prompt recorded on any span (the input messages of a model request)."""
        return None

    def run_output(self, agent: SpanNode) -> Any:
        """The output recorded on an agent-run span."""
        return None

    def response_text(self, node: SpanNode) -> str | None:
        """The text a model response answered with."""
        return None
