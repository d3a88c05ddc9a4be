"""Which model response issued each call, and the order the model issued a response's calls in.

Both are found only when asked: a count or a name list never needs them; putting calls back in
issue order needs the issuers of the few calls around a validation failure, and a record its own.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

from pydantic_evals.otel.span_tree import SpanNode

from ..conventions.messages import is_literal
from ..conventions.registry import REGISTRY, Registry
from .walk import CALLS_BEFORE, NAME, REQUEST_SPAN, SPAN, Call, Request

_SCAN_STEPS = 8
"""How far back a look-up scans the requests, once the first few have scanned all the way."""
_SCANS_BEFORE_INDEXING = 16
"""Look-ups answered by scanning before the requests are indexed (by parent, by call id)."""


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
        '_calls',
        '_found',
        '_id_scans',
        '_recoveries',
        '_registry',
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
        self._recoveries: dict[int, _Recovery] = {}

    def __call__(self, index: int) -> int | None:
        found = self._found
        if index in found:
            return found[index]
        issuer = self.direct(index)
        if issuer is None and self._requests:
            call_id = self._registry.call_id(self._calls[index][SPAN])
            if call_id is not None:
                issuer = self._enclosing_issuer(index, call_id)
                if issuer is None:
                    issuer = self._issuer_of_id(call_id)
        found[index] = issuer
        return issuer

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

    def recovered_id(self, index: int) -> str | None:
        """The call id of call `index` when its span records none: the response that issued it
        (the latest request under its parent) lists its calls; the call's place among that
        response's calls of the same name is its place among the issued calls of that name."""
        issuer = self.direct(index)
        if issuer is None:
            return None
        recovery = self._recoveries.get(issuer)
        if recovery is None:
            issued = self._registry.issued_calls(self._requests[issuer][REQUEST_SPAN])
            recovery = self._recoveries[issuer] = _Recovery(issued, self._requests[issuer][CALLS_BEFORE])
        return recovery.id_of(index, self._calls)

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


class _Recovery:
    """One response's issued ids, handed to its calls in order: each call's place among the
    response's calls of its name is counted once, however many calls ask (records are made in
    call order, so the scan only moves forward)."""

    def __init__(self, issued: list[tuple[str, str]], first: int) -> None:
        self._ids: dict[str, list[str]] = {}
        for call_id, name in issued:
            self._ids.setdefault(name, []).append(call_id)
        self._next = first  # the next walk position to count
        self._seen: dict[tuple[int, str], int] = {}  # (parent, name) -> calls counted so far
        self._places: dict[int, int] = {}

    def id_of(self, index: int, calls: list[Call]) -> str | None:
        call = calls[index]
        ids = self._ids.get(call[NAME])
        if not ids:
            return None  # the response lists no call of this name: nothing to count
        if index >= self._next:
            for position in range(self._next, index + 1):
                key = (id(calls[position][SPAN].parent), calls[position][NAME])
                self._places[position] = self._seen.get(key, 0)
                self._seen[key] = self._places[position] + 1
            self._next = index + 1
        place = self._places.get(index)
        return ids[place] if place is not None and place < len(ids) else None


def in_issue_order(
    calls: list[Call],
    invalid: list[int],
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
        ids = [registry.call_id(calls[i][SPAN]) for i in slots]
        positions = registry.issue_positions(requests[issuer][REQUEST_SPAN], ids)
        by_issue = sorted(range(len(slots)), key=lambda k: (positions.get(ids[k], len(slots)), slots[k]))
        if by_issue != list(range(len(slots))):
            order = order or list(range(len(calls)))
            for slot, source in zip(slots, by_issue, strict=True):
                order[slot] = slots[source]
    return _parallel_tasks_in_issue_order(calls, order, requests, issuers_of, registry)


def _parallel_tasks_in_issue_order(
    calls: list[Call],
    order: list[int] | None,
    requests: list[Request],
    issuers_of: Callable[[], Issuers],
    registry: Registry,
) -> list[int] | None:
    """Calls a framework runs as parallel tasks, each under a span of its own (LangGraph's `tools`),
    start in whatever order the tasks get going: a run of such calls (overlapping in time, under
    different parents) issued by one response is put in the order the response issued them.

    Only neighbours with different parents that overlap are looked at, so calls run by one agent
    span side by side (pydantic-ai's) cost one comparison each.
    """
    index = 0
    while index + 1 < len(calls):
        a, b = calls[index][SPAN], calls[index + 1][SPAN]
        if a.parent is b.parent or b.start_timestamp >= a.end_timestamp or _inside(b, a):
            index += 1  # a call made inside another (a sub-agent's, in an agent-as-tool) is not its sibling task
            continue
        issuers = issuers_of()
        issuer = issuers(index)
        end = index + 1
        while (
            end < len(calls)
            and calls[end][SPAN].parent is not calls[end - 1][SPAN].parent
            and calls[end][SPAN].start_timestamp < calls[end - 1][SPAN].end_timestamp
            and issuer is not None
            and issuers(end) == issuer
        ):
            end += 1
        if issuer is not None and end - index > 1:
            slots = list(range(index, end))
            ids = [registry.call_id(calls[i][SPAN]) for i in slots]
            positions = registry.issue_positions(requests[issuer][REQUEST_SPAN], ids)
            by_issue = sorted(slots, key=lambda i: (positions.get(ids[i - index], len(slots)), i))
            if by_issue != slots:
                order = order or list(range(len(calls)))
                current = [order[i] for i in slots]
                for slot, source in zip(slots, by_issue, strict=True):
                    order[slot] = current[source - index]
        index = end
    return order


def _inside(node: SpanNode, outer: SpanNode) -> bool:
    """Whether `outer` is an ancestor of `node`."""
    parent = node.parent
    while parent is not None:
        if parent is outer:
            return True
        parent = parent.parent
    return False


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
