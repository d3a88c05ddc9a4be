"""What an instrumentation family answers about spans: the interface every family module implements.

The extraction walk offers each span to the classifiers of the families whose marker attribute it
holds (see `registry`); the family whose classifier claims a span is asked everything else about it
later (arguments, result, call id, failure stage, tokens), when a record is made. Questions about a
whole run (agent runs, its prompt and output) go to every family in registry order, and the first
answer wins. A family answers `None` for "not mine", so families never need to know of each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, Final, Literal, NamedTuple

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
    """A classifier's answer for a span that is its family's but is not a tool call."""

    IGNORED = 'ignored'
    """The family's span, with nothing to extract (a summary or wrapper of calls that have spans)."""
    MODEL_REQUEST = 'model request'
    """One request to a model: its tokens and cost are counted, once."""


IGNORED: Final = Role.IGNORED
MODEL_REQUEST: Final = Role.MODEL_REQUEST

Answer = tuple[str, SpanKind] | Role | None
"""`(tool name, kind)` for a tool call attempt, a `Role`, or `None`: not this family's span."""

Classifier = Callable[[SpanNode, list[str]], Answer]
"""Classifies a span holding the classifier's marker; appends to the list why it skipped a span
that looked like a call but cannot be read."""


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


class Family:
    """An instrumentation family: override what it records; the defaults answer "not recorded".

    Subclass it in one module per family and add the instance to `registry.FAMILIES`. Keep the
    classifiers cheap: they run on every span holding their marker, in the one walk every
    evaluation pays for. Everything else runs only for the records an evaluator reads.
    """

    name: str = 'family'

    # -- classification (the hot path) --------------------------------------------------------

    def call_classifiers(self) -> Mapping[str, Classifier]:
        """Marker attribute -> classifier of the spans holding it that may be tool calls."""
        return {}

    def request_classifiers(self) -> Mapping[str, Classifier]:
        """Marker attribute -> classifier answering `MODEL_REQUEST` or `None`.

        It must never accept a span a call classifier of the family claims: model requests are
        also counted by a walk that skips tool calls (for budgets and run metrics).
        """
        return {}

    # -- tool calls this family classified ----------------------------------------------------

    def call_id(self, node: SpanNode) -> str | None:
        return None

    def arguments(self, node: SpanNode) -> Arguments:
        return Arguments(None, None, NOT_RECORDED)

    def result(self, node: SpanNode) -> str | None:
        return None

    def failure_stage(self, node: SpanNode) -> FailureStage:
        """Asked of failed attempts only."""
        return 'raised'

    # -- model requests this family classified ------------------------------------------------

    def usage(self, node: SpanNode) -> dict[str, int | float]:
        """Token counts and cost, by pydantic-evals' metric names (`input_tokens`, `cost`, ...)."""
        return {}

    def request_facts(self, node: SpanNode) -> RequestFacts:
        """Model, operation, tokens and cost: the tokens are `usage`'s, so both count alike."""
        usage = self.usage(node)
        cost = usage.get('cost')
        return RequestFacts(
            model=None,
            operation='chat',
            input_tokens=int(usage.get('input_tokens', 0)),
            output_tokens=int(usage.get('output_tokens', 0)),
            cache_read_tokens=int(usage.get('cache_read.input_tokens', 0)),
            cache_write_tokens=int(usage.get('cache_creation.input_tokens', 0)),
            cost=None if cost is None else float(cost),
        )

    def issued_call_ids(self, node: SpanNode) -> list[str]:
        """The ids of the tool calls a model response issued, in the order the model issued them."""
        return []

    def may_have_issued(self, node: SpanNode, call_id: str) -> bool:
        """A cheap test that may say yes wrongly but never no wrongly: could `node` hold `call_id`?"""
        return True

    def issue_positions(self, node: SpanNode, call_ids: list[str | None]) -> dict[str | None, int]:
        """Call id -> a number ordering the ids as the response issued them (a faster form may skip ids)."""
        return {call_id: position for position, call_id in enumerate(self.issued_call_ids(node))}

    # -- runs (every family is asked, in registry order) --------------------------------------

    def agent_run(self, node: SpanNode) -> str | None:
        """The agent's name when `node` is one agent run, else `None`."""
        return None

    def run_prompt(self, agent: SpanNode) -> str | None:
        """The user prompt recorded on an agent-run span."""
        return None

    def span_prompt(self, node: SpanNode) -> str | None:
        """The first user prompt recorded on any span (the input messages of a model request)."""
        return None

    def run_output(self, agent: SpanNode) -> Any:
        """The output recorded on an agent-run span, or `None`."""
        return None

    def response_text(self, node: SpanNode) -> str | None:
        """The text a model response (a request span this family classified) answered with."""
        return None


NOT_RECORDED = 'not available in span (`include_content` may be disabled).'
"""Why a call has no arguments when none were recorded (content capture off, or never recorded)."""
