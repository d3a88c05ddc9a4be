"""Which loaded trace belongs to which case of a dataset, and which traces form one conversation.

Which trace belongs to which case, in order of preference:

1. a root span whose `case_name` attribute equals the case name (pydantic-evals' case spans
   carry it, so a trace exported from a pydantic-evals run matches itself);
2. a trace whose file name without extensions equals the case name;
3. a trace id in the case's metadata: `metadata['trace_id']` or `metadata.trace_id`
   (32 hex characters, case-insensitive);
4. the trace's first user message (`trace_inputs`: the first prompt of its first agent run)
   equal to the case's inputs, whitespace normalised (runs of it collapsed to one space, the ends
   stripped; case kept). The inputs count as text when they are a string, or a mapping or object
   (a pydantic model, a dataclass) with a single field holding a string; other inputs never match
   this way. Production traces carry no case name: this is how a case finds the run that was asked
   the same thing.

The first rule that finds any trace decides; two traces found by it make the case ambiguous, an
`AmbiguousTraceError` (scoring one of them silently could hide the other, a regression, say). A
case with no trace becomes a failure in the report, with the rules it tried.

Traces stream: without a dataset each is scored as soon as it is loaded and then dropped; with
one, only traces that match a case are kept until they are scored (once a case is found by a
rule, traces a weaker rule finds for it are dropped; an ambiguous case keeps its first few).

With `group_conversations`, the traces sharing a conversation id (`conventions.sessions`) become
one `ConversationTrace`, which matches and scores as one trace: its tree holds every trace's
spans, each trace's roots in start order, so each turn stays its own top-level agent run. A trace
without a conversation id passes through unchanged, as soon as it is loaded; the others are held
until the input ends, as a turn may come in any later file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from pydantic import BaseModel
from pydantic_evals import Case
from pydantic_evals.otel.span_tree import SpanTree

from ..conventions import messages
from ..conventions.genai import is_side_span
from ..conventions.pydantic_evals import CASE_NAME
from ..conventions.sessions import conversation_id
from ..errors import AgenticEvalsError
from ..trajectory.run_io import trace_inputs

CASE_NAME_ATTRIBUTE = CASE_NAME
_RULES = (f'{CASE_NAME} attribute', 'file name', 'metadata trace_id', 'first user message')
_BY_INPUT = 3
_LISTED = 5
"""Traces an ambiguous case's error names before saying how many more."""
_SHOWN_INPUT = 80
"""Characters of a case's inputs a "no trace found" message quotes."""


class TraceLike(Protocol):
    """What scoring needs of a loaded trace (`agentic_evals.traces.LoadedTrace` is one)."""

    @property
    def trace_id(self) -> str: ...

    @property
    def tree(self) -> SpanTree: ...

    @property
    def name(self) -> str: ...


class AmbiguousTraceError(AgenticEvalsError, ValueError):
    """Cases that each match more than one trace by the same rule; `str()` lists them all."""

    def __init__(self, message: str, rules: frozenset[str] = frozenset()) -> None:
        super().__init__(message)
        self.rules = rules
        """The rules that found more than one trace (`first user message`: maybe turns of one conversation)."""


@dataclass
class _Found:
    """What the best rule so far found for a case: its rank, the first trace's id, the first few
    traces' labels (at most `_LISTED`), how many."""

    rank: int
    trace_id: str
    labels: list[str]
    count: int


@dataclass(frozen=True)
class CaseMatch:
    """A case and its trace (`None` when none was found), with the rule that paired them."""

    case: Case[Any, Any, Any]
    trace: TraceLike | None
    why: str


Hit = tuple[int, int]
"""A case a trace matches: (case index, rank of the rule that found it; 0 is the strongest)."""


class CaseIndex:
    """A dataset's cases as the tables matching looks traces up in; built once, small, picklable.

    `hits` is all a worker needs to tell which cases a trace may belong to; which one it does
    belong to is decided by a `CasePlan`, once every trace has been seen.
    """

    def __init__(self, cases: Sequence[Case[Any, Any, Any]]) -> None:
        self.names = [case.name or f'Case {i + 1}' for i, case in enumerate(cases)]
        self._by_name: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self._by_id: dict[str, int] = {}
        self._by_input: dict[str, list[int]] = {}
        self._tried: list[str] = []
        for index, case in enumerate(cases):
            wanted = _metadata_trace_id(case.metadata)
            if wanted is not None:
                self._by_id.setdefault(wanted, index)
            text = normalized(case_input_text(case.inputs))
            if text:
                self._by_input.setdefault(text, []).append(index)
            self._tried.append(_tried(self.names[index], wanted, text))

    def hits(self, trace: TraceLike) -> list[Hit]:
        """Every (case, rule rank) that finds `trace`, strongest rule first per case, without repeats."""
        hits: list[Hit] = []
        for root in trace.tree.roots:
            value = root.attributes.get(CASE_NAME_ATTRIBUTE)
            if isinstance(value, str) and value in self._by_name:
                hits.append((self._by_name[value], 0))
        if trace.name in self._by_name:
            hits.append((self._by_name[trace.name], 1))
        for trace_id in _trace_ids(trace):
            if trace_id in self._by_id:
                hits.append((self._by_id[trace_id], 2))
        if self._by_input:
            text = normalized(first_user_message(trace.tree))
            hits += [(index, _BY_INPUT) for index in self._by_input.get(text or '', ())]
        return list(dict.fromkeys(hits))

    def tried(self, index: int) -> str:
        """Why case `index` found no trace: every rule it tried."""
        return self._tried[index]


def _tried(name: str, wanted: str | None, text: str | None) -> str:
    tried = f'no root span with {CASE_NAME}={name!r}, no trace file named {name!r}'
    tried += f', no trace with id {wanted!r}' if wanted else ', no trace_id in the metadata'
    if not text:
        return tried + ', no text inputs to match a first user message'
    shown = text if len(text) <= _SHOWN_INPUT else text[: _SHOWN_INPUT - 3] + '...'
    return tried + f', no trace whose first user message is {shown!r}'


def is_side_trace(trace: TraceLike) -> bool:
    """Whether the trace only records agent objects being built (`create_agent` spans, each a trace of
    its own in AutoGen and OpenLIT): no run, so never a case, and never a second match of a case."""
    nodes = trace.tree.nodes_by_id.values()
    return bool(nodes) and all(is_side_span(node) for node in nodes)


def without_side_traces(traces: Iterable[TraceLike]) -> Iterator[TraceLike]:
    return (trace for trace in traces if not is_side_trace(trace))


def trace_label(trace: TraceLike) -> str:
    """How messages name a trace: `'name (trace id)'`."""
    return f'{trace.name} ({trace.trace_id})'


@dataclass(frozen=True)
class Decision:
    """The trace a case is scored on and the rule that found it."""

    trace_id: str
    rank: int

    @property
    def why(self) -> str:
        return _RULES[self.rank]


class CasePlan:
    """Which trace each case is scored on, decided from the traces' hits alone (never their trees).

    `offer` every trace that hits a case, in the order they were read, then `decide()`. Memory
    holds a few labels per case, so a first pass over millions of traces costs what the dataset
    does. A trace found for a case by a weaker rule than one that already found one is dropped for
    it; past the first few a rule finds for one case, traces are only counted (the case is
    ambiguous by then, and the error names only those).
    """

    def __init__(self, index: CaseIndex) -> None:
        self.index = index
        self._found: dict[int, _Found] = {}
        self.unmatched: list[str] = []
        """Labels of the first `_LISTED` traces that matched no case (`unmatched_count` counts them all)."""
        self.unmatched_count = 0

    def offer(self, trace_id: str, label: str, hits: Sequence[Hit]) -> None:
        """Record a trace's hits (none: an unmatched trace)."""
        if not hits:
            self.unmatch(label)
        for case_index, rank in hits:
            found = self._found.get(case_index)
            if found is None or rank < found.rank:
                self._found[case_index] = _Found(rank, trace_id, [label], 1)
            elif rank == found.rank:
                found.count += 1
                if len(found.labels) < _LISTED:
                    found.labels.append(label)

    def unmatch(self, label: str, count: int = 1) -> None:
        """Count `count` traces that matched no case; `label` names the first of them."""
        if len(self.unmatched) < _LISTED:
            self.unmatched.append(label)
        self.unmatched_count += count

    def found_trace(self, case_index: int) -> str | None:
        """The trace id the best rule so far found for a case."""
        found = self._found.get(case_index)
        return found.trace_id if found is not None else None

    def decide(self) -> dict[int, Decision]:
        """Case index -> its decision, for every case a trace was found for; raises `AmbiguousTraceError`
        first when any case matches two traces by its best rule."""
        ambiguous: list[str] = []
        rules: set[str] = set()
        decided: dict[int, Decision] = {}
        for case_index in sorted(self._found):
            found = self._found[case_index]
            if found.count > 1:
                rule = _RULES[found.rank]
                listed = ', '.join(found.labels)
                more = f', and {found.count - len(found.labels)} more' if found.count > len(found.labels) else ''
                name = self.index.names[case_index]
                ambiguous.append(f'case {name!r} matches {found.count} traces by {rule}: {listed}{more}')
                rules.add(rule)
            decided[case_index] = Decision(found.trace_id, found.rank)
        if ambiguous:
            raise AmbiguousTraceError('; '.join(ambiguous), frozenset(rules))
        return decided


class TraceMatcher:
    """Pairs streamed traces with a dataset's cases, keeping only traces that may be a case's.

    `offer` each trace as it is loaded, then `matches()`; `unmatched` names the traces no case
    wanted (their trees are not kept). For input too large to hold the matched trees, the CLI runs
    a `CasePlan` over the traces' hits instead, and reads the traces again.
    """

    def __init__(self, cases: Sequence[Case[Any, Any, Any]]) -> None:
        self.cases = cases
        self.plan = CasePlan(CaseIndex(cases))
        self._kept: dict[str, TraceLike] = {}
        self._holders: dict[str, int] = {}
        """Trace id -> how many cases' best trace so far it is (it is dropped at none)."""
        self.unmatched: list[str] = []
        """`'name (trace id)'` of every offered trace that matches no case."""

    def offer(self, trace: TraceLike) -> bool:
        """Keep `trace` if it is the first a rule found for a case so far; returns whether it matched one."""
        hits = self.plan.index.hits(trace)
        before = {case: self.plan.found_trace(case) for case, _ in hits}
        self.plan.offer(trace.trace_id, trace_label(trace), hits)
        if not hits:
            self.unmatched.append(trace_label(trace))
        for case, old in before.items():
            if self.plan.found_trace(case) != old:  # this trace is the case's now
                self._kept[trace.trace_id] = trace
                self._holders[trace.trace_id] = self._holders.get(trace.trace_id, 0) + 1
                if old is not None:
                    self._holders[old] -= 1
                    if not self._holders[old]:  # a stronger rule replaced it for its last case
                        del self._holders[old], self._kept[old]
        return bool(hits)

    def matches(self) -> list[CaseMatch]:
        """Every case with its trace, in case order; raises `AmbiguousTraceError` first if any is ambiguous."""
        decided = self.plan.decide()
        result: list[CaseMatch] = []
        for index, case in enumerate(self.cases):
            decision = decided.get(index)
            if decision is None:
                result.append(CaseMatch(case, None, self.plan.index.tried(index)))
            else:
                result.append(CaseMatch(case, self._kept[decision.trace_id], decision.why))
        return result


def match_traces(cases: Sequence[Case[Any, Any, Any]], traces: Iterable[TraceLike]) -> list[CaseMatch]:
    """Pair each case with its trace by the rules in the module docstring."""
    matcher = TraceMatcher(cases)
    for trace in traces:
        matcher.offer(trace)
    return matcher.matches()


def _metadata_trace_id(metadata: object) -> str | None:
    value = metadata.get('trace_id') if isinstance(metadata, Mapping) else getattr(metadata, 'trace_id', None)
    return value.lower() if isinstance(value, str) else None


def _trace_ids(trace: TraceLike) -> list[str]:
    """The trace's id, or every id of a conversation's traces (a case's `trace_id` may name any turn)."""
    if isinstance(trace, ConversationTrace):
        return [t.trace_id.lower() for t in trace.traces]
    return [trace.trace_id.lower()]


def normalized(text: str | None) -> str | None:
    """`text` with each run of whitespace one space and the ends stripped: how inputs and prompts compare."""
    return None if text is None else ' '.join(text.split())


def case_input_text(inputs: object) -> str | None:
    """A case's inputs as the text a first user message would hold: a string, or the one field of a
    mapping, pydantic model or dataclass when it holds a string; else `None`."""
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        values = list(inputs.values())
    elif isinstance(inputs, BaseModel):
        values = [getattr(inputs, name) for name in type(inputs).model_fields]
    elif dataclasses.is_dataclass(inputs) and not isinstance(inputs, type):
        values = [getattr(inputs, f.name) for f in dataclasses.fields(inputs)]
    else:
        return None
    return values[0] if len(values) == 1 and isinstance(values[0], str) else None


def first_user_message(tree: SpanTree) -> str | None:
    """The text of a trace's first user message: its run's inputs (`trace_inputs`), or, when those
    are a message list, the text of the first user message in it."""
    inputs = trace_inputs(tree)
    if isinstance(inputs, str) or inputs is None:
        return inputs
    for message in inputs if isinstance(inputs, list) else ():
        if isinstance(message, Mapping) and message.get(messages.ROLE) == messages.USER:
            content = message.get(messages.CONTENT)
            text = content if isinstance(content, str) else messages.text_of(dict(message))
            if text is not None:
                return text
    return None


def case_from_trace(trace: TraceLike, *, name: str | None = None) -> Case[Any, Any, Any]:
    """The case a trace stands for without a dataset: named after its root's `case_name` (else its file),
    inputs from its agent span, its trace id in the metadata.

    A conversation is named after its conversation id, with every turn's trace id in the metadata.
    """
    if isinstance(trace, ConversationTrace):
        metadata: dict[str, object] = {
            'conversation_id': trace.conversation_id,
            'trace_ids': [t.trace_id for t in trace.traces],
        }
        return Case(name=name or trace.conversation_id, inputs=trace_inputs(trace.tree), metadata=metadata)
    if name is None:
        roots = trace.tree.roots
        name = next((v for r in roots if isinstance(v := r.attributes.get(CASE_NAME_ATTRIBUTE), str)), trace.name)
    return Case(name=name, inputs=trace_inputs(trace.tree), metadata={'trace_id': trace.trace_id})


@dataclass(frozen=True)
class ConversationTrace:
    """The traces of one conversation, scored as one: its tree holds every trace's spans.

    The tree's roots are each trace's roots, in start order, so every turn is its own top-level
    agent run; its id and name are the first turn's (the file-name and trace-id rules find the
    conversation by any of its turns' ids, and by the first turn's file).
    """

    conversation_id: str
    traces: tuple[TraceLike, ...]
    """The turns, in start order."""
    tree: SpanTree

    @property
    def trace_id(self) -> str:
        return self.traces[0].trace_id

    @property
    def name(self) -> str:
        return self.traces[0].name


def conversation_of(conversation: str, traces: Sequence[TraceLike]) -> ConversationTrace:
    """One `ConversationTrace` of `traces` (turns of the same conversation, in any order)."""
    ordered = sorted(traces, key=_started)
    tree = SpanTree()
    tree.add_spans([node for trace in ordered for node in trace.tree])
    return ConversationTrace(conversation, tuple(ordered), tree)


def _started(trace: TraceLike) -> datetime:
    return min((r.start_timestamp for r in trace.tree.roots), default=datetime.max.replace(tzinfo=timezone.utc))


def group_conversations(traces: Iterable[TraceLike]) -> Iterator[TraceLike]:
    """`traces` with those sharing a conversation id merged into one `ConversationTrace` each.

    A trace that records no conversation id is yielded as it comes; the others are held until
    `traces` ends (a later file may hold another turn), then yielded one conversation at a time, in
    the order each conversation was first seen. Memory therefore holds every trace that has a
    conversation id, and pydantic-ai gives every run one.
    """
    held: dict[str, list[TraceLike]] = {}
    for trace in traces:
        found = conversation_id(trace.tree)
        if found is None:
            yield trace
        else:
            held.setdefault(found, []).append(trace)
    while held:
        conversation = next(iter(held))
        yield conversation_of(conversation, held.pop(conversation))
