"""Which model response issued each call, and the order the model issued a response's calls in.

Both are found only when asked: a count or a name list never needs them; putting calls back in
issue order needs the issuers of the few calls around a validation failure, and a record its own.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

from pydantic_evals.otel.span_tree import SpanNode

from ..conventions.arguments import json_or_none
from ..conventions.family import Arguments, IssuedCall
from ..conventions.messages import is_literal
from ..conventions.registry import REGISTRY, Registry
from .walk import CALLS_BEFORE, NAME, REQUEST_SPAN, SPAN, Call, Request

_UNKNOWN = object()
_SCAN_STEPS = 8
"""How far back a look-up scans the requests, once the first few have scanned all the way."""
_SCANS_BEFORE_INDEXING = 16
"""Look-ups answered by scanning before the requests are indexed (by parent, by call id)."""
_NAME_SCAN_STEPS = 64
"""How far back a call with neither an id nor a request beside it looks for the response that issued it."""


class Issuers:
    """`issuers(i)`: the index of the response that issued call `i` (walk order), or `None`.

    A call's issuer is the latest model request under the same parent span (its agent run) before
    it: pydantic-ai runs a response's calls after the response and before the next request of the
    same run. A call with none is issued by the response its span is nested in when that response
    holds its call id (frameworks that put tool spans under the model span), else by the first
    response whose output holds its call id (an approved deferred call, run first when its run
    resumes).

    A record or a reordering asks for a few calls' issuers; `inspect` for all. Look-ups scan the
    requests near the call, and build an index only when that does not find the answer.
    """

    __slots__ = (
        '_before',
        '_by_call_id',
        '_by_parent',
        '_call_ids',
        '_calls',
        '_found',
        '_id_scans',
        '_issued',
        '_own_arguments',
        '_own_ids',
        '_registry',
        '_request_calls',
        '_requests',
        '_scans',
        '_texts',
    )

    def __init__(self, calls: list[Call], requests: list[Request], registry: Registry = REGISTRY) -> None:
        self._registry = registry
        self._calls = calls
        self._requests = requests
        self._found: dict[int, int | None] = {}
        self._before: list[int] | None = None
        self._scans = 0
        self._by_parent: dict[int, tuple[list[int], list[int]]] | None = None
        self._by_call_id: dict[str, int] | None = None
        self._id_scans: dict[str, int | None] = {}
        self._texts: tuple[str, list[int]] | None = None
        self._call_ids: set[int] | None = None
        self._issued: dict[int, list[IssuedCall]] = {}
        self._own_ids: dict[int, object] = {}
        self._own_arguments: dict[int, Arguments] = {}
        self._request_calls: dict[int, set[int]] = {}

    def __call__(self, index: int) -> int | None:
        found = self._found
        if index in found:
            return found[index]
        issuer = self.direct(index)
        if issuer is None and self._requests:
            call_id = self.call_id(index)
            if call_id is not None:
                issuer = self._enclosing_issuer(index, call_id)
                if issuer is None:
                    issuer = self._issuer_of_id(call_id)
            else:
                issuer = self._issuer_by_name(index)
        found[index] = issuer
        return issuer

    def _issuer_by_name(self, index: int) -> int | None:
        """For a call whose span has no id and no request beside it (a framework that runs each
        call in a task span of its own, LangGraph's `tools`): the latest earlier response that
        issued a call of its name, among those not made inside a call the call is not inside
        (a sub-agent's, in an agent-as-tool)."""
        if self._before is None:
            self._before = [request[CALLS_BEFORE] for request in self._requests]
        node, name = self._calls[index][SPAN], self._calls[index][NAME]
        around: set[int] | None = None
        position = bisect_right(self._before, index) - 1
        for candidate in range(position, max(-1, position - _NAME_SCAN_STEPS), -1):
            if not any(call.name == name for call in self.issued(candidate)):
                continue
            inside = self._request_calls.get(candidate)
            if inside is None:
                inside = self._request_calls[candidate] = _call_ancestors(
                    self._requests[candidate][REQUEST_SPAN], self._call_spans()
                )
            if inside:  # made inside a call: the call's own sub-agent's, unless this call is in it too
                around = _call_ancestors(node, self._call_spans()) if around is None else around
                if not inside <= around:
                    continue
            return candidate
        return None

    def _call_spans(self) -> set[int]:
        if self._call_ids is None:
            self._call_ids = {id(call[SPAN]) for call in self._calls}
        return self._call_ids

    def issued_call(self, index: int) -> IssuedCall | None:
        """The call, as its issuing response lists it: matched by call id when the span records one,
        else by its place among that response's calls of its name."""
        issuer = self(index)
        if issuer is None:
            return None
        issued = self.issued(issuer)
        if not issued:
            return None
        call_id = self.call_id(index)
        if call_id is not None:
            return next((call for call in issued if call.call_id == call_id), None)
        name = self._calls[index][NAME]
        same_name = [call for call in issued if call.name == name]
        if not same_name:
            return None
        arguments = self.arguments(index).parsed
        if arguments is not None and len(same_name) > 1:  # the recorded arguments tell them apart
            alike = [call for call in same_name if _parsed(call.arguments) == arguments]
            if len(alike) == 1:
                return alike[0]
        # Its place among the calls of its name that the same response issued, in call order.
        earlier = 0
        for other in range(index - 1, -1, -1):
            if self._calls[other][NAME] == name and self(other) == issuer:
                earlier += 1
            elif self._requests[issuer][CALLS_BEFORE] > other:
                break
        return same_name[earlier] if earlier < len(same_name) else None

    def call_id(self, index: int) -> str | None:
        """The call id the span of call `index` records (asked once per call)."""
        found = self._own_ids.get(index, _UNKNOWN)
        if found is _UNKNOWN:
            found = self._own_ids[index] = self._registry.call_id(self._calls[index][SPAN])
        return found  # type: ignore[return-value]

    def arguments(self, index: int) -> Arguments:
        """The arguments the span of call `index` records (read once per call)."""
        found = self._own_arguments.get(index)
        if found is None:
            found = self._own_arguments[index] = self._registry.arguments(self._calls[index][SPAN])
        return found

    def issued(self, issuer: int) -> list[IssuedCall]:
        """The calls request `issuer` issued (parsed once per request)."""
        found = self._issued.get(issuer)
        if found is None:
            found = self._issued[issuer] = self._registry.issued(self._requests[issuer][REQUEST_SPAN])
        return found

    def positions(self, issuer: int, slots: list[int]) -> dict[int, int]:
        """Walk position -> place in the issuing response, for calls `slots` that `issuer` issued
        (a call the response does not list is left out)."""
        node = self._requests[issuer][REQUEST_SPAN]
        ids = [self.call_id(i) for i in slots]
        if all(call_id is not None for call_id in ids):
            by_id = self._registry.issue_positions(node, ids)
            return {slot: by_id[call_id] for slot, call_id in zip(slots, ids, strict=True) if call_id in by_id}
        issued = self.issued(issuer)
        places: dict[int, int] = {}
        taken: set[int] = set()
        for slot, call_id in zip(slots, ids, strict=True):
            name = self._calls[slot][NAME]
            arguments = self.arguments(slot).parsed
            candidates = [
                place
                for place, call in enumerate(issued)
                if place not in taken and (call.call_id == call_id if call_id is not None else call.name == name)
            ]
            if arguments is not None and len(candidates) > 1:  # same name twice: the arguments tell them apart
                matching = [p for p in candidates if _parsed(issued[p].arguments) == arguments]
                candidates = matching or candidates
            if candidates:
                places[slot] = candidates[0]
                taken.add(candidates[0])
        return places

    def _enclosing_issuer(self, index: int, call_id: str) -> int | None:
        """The model request that is the call span's parent, when that response issued `call_id`.

        Frameworks that put a response's tool spans under its model span say who issued them; then
        only that response is read, not every response's text.
        """
        if self._before is None:
            self._before = [request[CALLS_BEFORE] for request in self._requests]
        parent = self._calls[index][SPAN].parent
        requests = self._requests
        position = bisect_right(self._before, index) - 1  # a parent starts before its child
        for candidate in range(position, max(-1, position - _SCAN_STEPS), -1):
            node = requests[candidate][REQUEST_SPAN]
            if node is parent:
                return candidate if call_id in self._registry.issued_call_ids(node) else None
        return None

    def direct(self, index: int) -> int | None:
        """The latest request under the call's parent walked before it (no call-id recovery)."""
        parent = self._calls[index][SPAN].parent
        if self._by_parent is None:
            # Scan back from the last request walked before the call: in pydantic-ai's layout its
            # own run's latest response is a step or two away. The first few look-ups scan all the
            # way (cheaper than an index for one record); later ones a few steps, then the index.
            if self._before is None:
                self._before = [request[CALLS_BEFORE] for request in self._requests]
            requests = self._requests
            position = bisect_right(self._before, index) - 1
            self._scans += 1
            stop = max(-1, position - _SCAN_STEPS) if self._scans > _SCANS_BEFORE_INDEXING else -1
            while position > stop:
                if requests[position][REQUEST_SPAN].parent is parent:
                    return position
                position -= 1
            if position < 0:
                return None
        entry = self._index().get(id(parent))
        if entry is None:
            return None
        slot = bisect_right(entry[0], index)  # that parent's requests walked before call `index`
        return entry[1][slot - 1] if slot else None

    def group_end(self, issuer: int, parent: object) -> int:
        """Where the calls a response issued under `parent` end: at the parent's next request."""
        requests = self._requests
        stop = min(len(requests), issuer + 1 + _SCAN_STEPS)
        for position in range(issuer + 1, stop):
            if requests[position][REQUEST_SPAN].parent is parent:
                return requests[position][CALLS_BEFORE]
        if stop == len(requests):
            return len(self._calls)
        before, positions = self._index()[id(parent)]
        slot = bisect_right(positions, issuer)
        return before[slot] if slot < len(positions) else len(self._calls)

    def _index(self) -> dict[int, tuple[list[int], list[int]]]:
        """Parent (by id) -> (calls walked before, position) of each of its requests, in walk order."""
        if self._by_parent is None:
            by_parent: dict[int, tuple[list[int], list[int]]] = {}
            for position, request in enumerate(self._requests):
                key = id(request[REQUEST_SPAN].parent)
                entry = by_parent.get(key)
                if entry is None:
                    entry = by_parent[key] = ([], [])
                entry[0].append(request[CALLS_BEFORE])
                entry[1].append(position)
            self._by_parent = by_parent
        return self._by_parent

    def _issuer_of_id(self, call_id: str) -> int | None:
        if self._by_call_id is not None:
            return self._by_call_id.get(call_id)
        if call_id in self._id_scans:
            return self._id_scans[call_id]
        nodes = [request[REQUEST_SPAN] for request in self._requests]
        if len(self._id_scans) >= _SCANS_BEFORE_INDEXING:
            by_call_id: dict[str, int] = {}
            for position, node in enumerate(nodes):
                for issued in self._registry.issued_call_ids(node):
                    by_call_id.setdefault(issued, position)
            self._by_call_id = by_call_id
            return by_call_id.get(call_id)
        found = self._id_scans[call_id] = self._search(nodes, call_id)
        return found

    def _search(self, nodes: list[SpanNode], call_id: str) -> int | None:
        """The first response that issued `call_id`: its quoted id is found in all the responses'
        texts at once (one search in C), and only the responses where it appears are parsed."""
        if not is_literal(call_id):
            return next((p for p, node in enumerate(nodes) if call_id in self._registry.issued_call_ids(node)), None)
        if self._texts is None:
            texts = [text or '' for text in self._registry.issued_texts(nodes)]
            self._texts = ('\x00'.join(texts), list(accumulate(map((1).__add__, map(len, texts)))))
        joined, ends = self._texts
        quoted = f'"{call_id}"'
        offset = joined.find(quoted)
        while offset >= 0:
            position = bisect_right(ends, offset)  # the response whose text holds this offset
            if call_id in self._registry.issued_call_ids(nodes[position]):
                return position
            offset = joined.find(quoted, ends[position])  # not a tool call part there: the next response
        return None


def in_issue_order(
    calls: list[Call],
    invalid: list[int],
    breaks: list[int],
    requests: list[Request],
    issuers_of: Callable[[], Issuers],
    registry: Registry = REGISTRY,
) -> list[int] | None:
    """Walk positions in call order (`None` when that is walk order): start order, except that each
    model response's calls take the order the model issued them in.

    pydantic-ai validates all of a response's calls before running any, so a call that fails
    validation starts before the siblings the model issued ahead of it, while calls that run start
    in issue order. Only a validation failure directly followed by a sibling (same parent, same
    issuer) can therefore be out of place, and only that response's issued order is read. A group's
    calls are permuted among the group's own slots, so calls of other runs in between (a
    sub-agent's) stay where time put them; an approved deferred call, run on resumption in a new
    run, is not a sibling of its old group.

    `issuers_of` gives the issuers, asked only when a call's issuer is needed.
    """
    order: list[int] | None = None
    moved: list[int] = []  # slots whose call `order` changed
    seen: set[tuple[int, int]] = set()
    for index in invalid:
        if index + 1 == len(calls):
            continue
        parent = calls[index][SPAN].parent
        if calls[index + 1][SPAN].parent is not parent:
            continue
        run = id(parent)
        issuers = issuers_of()
        issuer = issuers.direct(index)
        if issuer is not None:
            # Issued in its own run: the group is the run's calls until the run's next response.
            end = issuers.group_end(issuer, parent)
            if index + 1 >= end or (issuer, run) in seen:
                continue
            slots = [i for i in range(index, end) if calls[i][SPAN].parent is parent]
        else:
            issuer = issuers(index)  # found by its call id
            if issuer is None or (issuer, run) in seen or issuers(index + 1) != issuer:
                continue
            slots = _sibling_slots(calls, index, run, issuer, issuers)
        seen.add((issuer, run))
        places = issuers.positions(issuer, slots)
        by_issue = sorted(range(len(slots)), key=lambda k: (places.get(slots[k], len(slots)), slots[k]))
        if by_issue != list(range(len(slots))):
            order = order or list(range(len(calls)))
            for slot, source in zip(slots, by_issue, strict=True):
                order[slot] = slots[source]
                if slot != slots[source]:
                    moved.append(slot)
    return _parallel_tasks_in_issue_order(calls, breaks, order, moved, requests, issuers_of, registry)


def _parallel_tasks_in_issue_order(
    calls: list[Call],
    breaks: list[int],
    order: list[int] | None,
    moved: list[int],
    requests: list[Request],
    issuers_of: Callable[[], Issuers],
    registry: Registry,
) -> list[int] | None:
    """The calls one response issued take the order it issued them in, whatever order they started
    in: tasks, threads and millisecond clocks (JavaScript SDKs) start them in any order, and equal
    or near timestamps say nothing.

    Calls of one response are walked with no model request between them, so only such runs of
    calls are looked at (a call after a request of its own costs nothing); within a run, the calls
    of each response are put in its order among their own places, so a sub-agent's calls in
    between stay where time put them.
    """
    if len(calls) < 2:
        return order
    sequence = order or list(range(len(calls)))  # walk positions in call order so far
    # A call is known to follow its neighbour in issue order unless the walk noted a break there
    # (another parent, a framework that does not start calls in issue order, a tie),
    # or `in_issue_order` moved either. Only the runs around these steps are read.
    suspects = set(breaks)
    suspects.update(moved)
    suspects.update(slot + 1 for slot in moved)
    suspects.discard(0)
    suspects.discard(len(calls))
    # A run ends where a request was walked (its response's calls come after it) or where the
    # next call is of another agent run; a step inside a run that is a suspect is unclear.
    bounds = {request[CALLS_BEFORE] for request in requests}
    unclear: list[int] = []
    for k in sorted(suspects - bounds):
        a, b = calls[sequence[k - 1]][SPAN], calls[sequence[k]][SPAN]
        if a.parent is not b.parent and not _one_run(a, b, registry):
            bounds.add(k)
        else:
            unclear.append(k)
    if not unclear:
        return order
    bounds.update((0, len(calls)))
    edges = sorted(bounds)
    runs: dict[int, int] = {}  # start -> end of each run holding an unclear step
    for k in unclear:
        after = bisect_right(edges, k)  # `k` is no edge: the run is edges[after - 1] to edges[after]
        runs[edges[after - 1]] = edges[after]
    changed = False
    for start, end in runs.items():
        if not _started_in_issue_order(calls, sequence, start, end, registry):
            changed = _issue_order_within(calls, sequence, start, end, issuers_of()) or changed
    return sequence if changed or order is not None else None


def _one_run(a: SpanNode, b: SpanNode, registry: Registry) -> bool:
    """Whether two calls walked one after the other ran in one agent run: under one parent, or under
    parents neither of which is an agent run (tasks of one run). An approved deferred call runs when
    its run resumes, in a new run span: it is not its old response's sibling any more."""
    pa, pb = a.parent, b.parent
    if pa is pb:
        return True
    return not (pa is not None and registry.agent_run(pa) is not None) and not (
        pb is not None and registry.agent_run(pb) is not None
    )


def _started_in_issue_order(calls: list[Call], sequence: list[int], start: int, end: int, registry: Registry) -> bool:
    """Whether the calls at `sequence[start:end]` are known to be in issue order without reading the
    response: every span is of a framework that starts calls in issue order (pydantic-ai), all under
    one parent (its layout), and their start times strictly increase (no tie left to insertion order)."""
    first = calls[sequence[start]][SPAN]
    if not registry.in_order_check(first):
        return False
    # Spans under one parent are one instrumentation's: the first call speaks for its siblings.
    previous = None
    parent = first.parent
    for slot in range(start, end):
        node, _, kind = calls[sequence[slot]]
        if kind == 'invalid':
            continue  # started ahead of its siblings, and put in its place by `in_issue_order` already
        started = node.start_timestamp
        if node.parent is not parent or (previous is not None and started <= previous):
            return False
        previous = started
    return True


def _issue_order_within(calls: list[Call], sequence: list[int], start: int, end: int, issuers: Issuers) -> bool:
    """Put the calls at `sequence[start:end]` that one response issued in its order; whether any moved."""
    by_issuer: dict[int, list[int]] = {}  # issuer -> the places in `sequence` of its calls
    for slot in range(start, end):
        issuer = issuers(sequence[slot])
        if issuer is not None:
            by_issuer.setdefault(issuer, []).append(slot)
    changed = False
    for issuer, slots in by_issuer.items():
        if len(slots) < 2:
            continue
        places = issuers.positions(issuer, [sequence[slot] for slot in slots])
        by_issue = sorted(slots, key=lambda slot: (places.get(sequence[slot], len(slots)), slot))
        if by_issue != slots:
            current = {slot: sequence[slot] for slot in slots}
            for slot, source in zip(slots, by_issue, strict=True):
                sequence[slot] = current[source]
            changed = True
    return changed


def _call_ancestors(node: SpanNode, calls: set[int]) -> set[int]:
    """The calls (by span id) `node` was made inside (a parent cycle, in a hand-built tree, ends the climb)."""
    found: set[int] = set()
    seen: set[int] = set()
    parent = node.parent
    while parent is not None and id(parent) not in seen:
        seen.add(id(parent))
        if id(parent) in calls:
            found.add(id(parent))
        parent = parent.parent
    return found


_parsed = json_or_none


def _sibling_slots(calls: list[Call], first: int, run: int, issuer: int, issuers: Issuers) -> list[int]:
    """Positions of the calls issued by `issuer` in `run`, from `first` until the run's next response."""
    slots: list[int] = []
    for index in range(first, len(calls)):
        if id(calls[index][SPAN].parent) != run:
            continue  # another run's call (a sub-agent's): not a sibling, not the end either
        if issuers(index) != issuer:
            break
        slots.append(index)
    return slots
