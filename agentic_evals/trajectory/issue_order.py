"""Which model response issued each call, and the order the model issued a response's calls in.

Both are found only when asked: a count or a name list never needs them; putting calls back in
issue order needs the issuers of the few calls around a validation failure, and a record its own.
"""

from __future__ import annotations

from bisect import bisect_right

from .walk import CALLS_BEFORE, FAMILY, REQUEST_SPAN, SPAN, Call, Request

_LOOKUPS_BEFORE_INDEXING = 8
"""Call-id look-ups answered by scanning the responses before every response's ids are indexed."""


class Issuers:
    """`issuers(i)`: the index of the response that issued call `i` (walk order), or `None`.

    A call's issuer is the latest model request under the same parent span (its agent run) before
    it: pydantic-ai runs a response's calls after the response and before the next request of the
    same run. A call with none (an approved deferred call, run first when its run resumes; or a
    framework that puts tool spans under the model span) is issued by the first response whose
    output holds its call id.
    """

    def __init__(self, calls: list[Call], requests: list[Request]) -> None:
        self._calls = calls
        self._requests = requests
        self._found: dict[int, int | None] = {}
        self._by_parent: dict[int, tuple[list[int], list[int]]] | None = None
        self._by_call_id: dict[str, int] | None = None
        self._looked_up: dict[str, int | None] = {}

    def __call__(self, index: int) -> int | None:
        if index in self._found:
            return self._found[index]
        issuer = self._latest_sibling_request(index)
        if issuer is None and self._requests:
            call = self._calls[index]
            call_id = call[FAMILY].call_id(call[SPAN])
            issuer = None if call_id is None else self._issuer_of_id(call_id)
        self._found[index] = issuer
        return issuer

    def _latest_sibling_request(self, index: int) -> int | None:
        if self._by_parent is None:
            by_parent: dict[int, tuple[list[int], list[int]]] = {}
            for position, request in enumerate(self._requests):
                before, indices = by_parent.setdefault(id(request[REQUEST_SPAN].parent), ([], []))
                before.append(request[CALLS_BEFORE])
                indices.append(position)
            self._by_parent = by_parent
        found = self._by_parent.get(id(self._calls[index][SPAN].parent))
        if found is None:
            return None
        before, indices = found
        slot = bisect_right(before, index)  # requests walked before call `index`
        return indices[slot - 1] if slot else None

    def _issuer_of_id(self, call_id: str) -> int | None:
        if self._by_call_id is not None:
            return self._by_call_id.get(call_id)
        if call_id in self._looked_up:
            return self._looked_up[call_id]
        if len(self._looked_up) >= _LOOKUPS_BEFORE_INDEXING:
            by_call_id: dict[str, int] = {}
            for position, (node, family, _) in enumerate(self._requests):
                for issued in family.issued_call_ids(node):
                    by_call_id.setdefault(issued, position)
            self._by_call_id = by_call_id
            return by_call_id.get(call_id)
        # A few look-ups: test each response cheaply, parse only those that may hold the id.
        found = next(
            (
                position
                for position, (node, family, _) in enumerate(self._requests)
                if family.may_have_issued(node, call_id) and call_id in family.issued_call_ids(node)
            ),
            None,
        )
        self._looked_up[call_id] = found
        return found


def in_issue_order(
    calls: list[Call], invalid: list[int], requests: list[Request], issuers: Issuers
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
    """
    order: list[int] | None = None
    seen: set[tuple[int, int]] = set()
    for index in invalid:
        if index + 1 == len(calls):
            continue
        run = id(calls[index][SPAN].parent)
        if id(calls[index + 1][SPAN].parent) != run:
            continue
        issuer = issuers(index)
        if issuer is None or (issuer, run) in seen or issuers(index + 1) != issuer:
            continue
        seen.add((issuer, run))
        slots = _sibling_slots(calls, index, run, issuer, issuers)
        node, family, _ = requests[issuer]
        ids = [calls[i][FAMILY].call_id(calls[i][SPAN]) for i in slots]
        positions = family.issue_positions(node, ids)
        by_issue = sorted(range(len(slots)), key=lambda k: (positions.get(ids[k], len(slots)), slots[k]))
        if by_issue != list(range(len(slots))):
            order = order or list(range(len(calls)))
            for slot, source in zip(slots, by_issue, strict=True):
                order[slot] = slots[source]
    return order


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
