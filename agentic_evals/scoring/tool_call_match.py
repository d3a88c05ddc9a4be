"""Pass or fail: did the agent make the expected tool calls? LangChain's and ADK's match modes, made right.

The modes say which calls must pair up, one actual call with one expected call of the same tool
whose arguments match (see `argument_rules`):

- `strict`: the same model responses in the same order, the calls of one response as a multiset;
- `unordered`: every call pairs, in any order;
- `subset`: every actual call pairs with a distinct expected call (expected calls may be left over);
- `superset`: every expected call pairs with a distinct actual call (extra calls are fine);
- `in_order`: `superset`, and the paired calls keep the expected order (other calls in between).

Pairing is a maximum bipartite matching per tool, so a valid pairing is found whenever one exists:
LangChain agentevals and DeepEval take the first compatible call, and fail when an early call
takes the partner a later one needed. `in_order` needs no matching: placing each expected call on
the earliest compatible actual call after the previous one is optimal for a subsequence.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..conventions.arguments import parse_arguments
from ..conversations import is_message, trajectory_from_messages
from ..trajectory.records import ToolCall
from ..trajectory.trajectory import Trajectory
from .argument_rules import ArgumentMatcher, ArgumentsMode, parse_matchers
from .call_matching import CallView, canonical_json, sections
from .metrics import MetricResult, missing_agent, scope_suffix
from .sequences import short_repr
from .turns import score_turns

ToolCallMatchMode = Literal['strict', 'unordered', 'subset', 'superset', 'in_order']
MODES: tuple[ToolCallMatchMode, ...] = ('strict', 'unordered', 'subset', 'superset', 'in_order')
LISTED = 10
"""How many calls a reason lists in each section before `and N more`."""
_CALL_KEYS = frozenset({'name', 'arguments', 'args', 'id', 'type'})
"""What an expected call may hold: ours, and LangChain's tool-call dict (`id`, `type: 'tool_call'`)."""


@dataclass(frozen=True)
class Expected:
    """The expected calls, and how they group into model responses when they came from a conversation."""

    calls: tuple[CallView, ...]
    """`args is None` (with no `problem`) means the expectation gave no arguments: any call of the tool."""
    responses: tuple[tuple[int, ...], ...] | None = None


@dataclass(frozen=True)
class ToolCallMatchResult(MetricResult):
    """A `MetricResult` with the pairing behind it, for views that align expected and actual calls."""

    pairs: tuple[tuple[int, int], ...] = ()
    """`(expected index, actual index)` of every paired call."""
    missing: tuple[int, ...] = ()
    """Expected calls left unpaired."""
    extra: tuple[int, ...] = ()
    """Actual calls left unpaired."""
    mismatches: tuple[tuple[int, int, tuple[str, ...]], ...] = ()
    """`(expected, actual, problems)`: unpaired calls of the same tool, with why their arguments differ."""
    expected: tuple[CallView, ...] = ()
    actual: tuple[CallView, ...] = ()
    turns: tuple[ToolCallMatchResult, ...] = ()
    """With expected calls per turn: each turn's result (turns missing on either side have none)."""


# -- inputs ------------------------------------------------------------------------------------------


def parse_expected(expected_calls: object) -> Expected | tuple[Expected, ...]:
    """Expected calls as `{name, arguments}` (or `args`) mappings, or a conversation in any supported
    format (its model responses kept); a list of those is one expectation per turn. `ValueError`
    naming the bad item."""
    if (
        isinstance(expected_calls, Sequence)
        and not isinstance(expected_calls, (str, bytes))
        and expected_calls
        and all(isinstance(turn, (list, tuple)) for turn in expected_calls)
    ):
        turns: list[Expected] = []
        for number, turn in enumerate(expected_calls, start=1):
            try:
                parsed = parse_expected(turn)
            except ValueError as e:
                raise ValueError(f'turn {number}: {e}') from None
            assert isinstance(parsed, Expected)  # a turn's items are calls or messages, never lists
            turns.append(parsed)
        return tuple(turns)
    return _parse_one(expected_calls)


def _parse_one(expected_calls: object) -> Expected:
    if isinstance(expected_calls, (str, bytes)):
        return _from_conversation(expected_calls, 'expected_calls')
    if isinstance(expected_calls, Mapping) or not isinstance(expected_calls, Sequence):
        raise ValueError(f'expected_calls must be a list of calls or a conversation, got {short_repr(expected_calls)}')
    if _is_conversation(expected_calls):
        return _from_conversation(expected_calls, 'expected_calls')
    if any(isinstance(item, (list, tuple)) for item in expected_calls):
        raise ValueError('expected_calls must hold calls, or be a list of turns each a list of calls; not a mix')
    return Expected(
        tuple(_parse_call(item, i, 'expected_calls', expected=True) for i, item in enumerate(expected_calls))
    )


def _is_conversation(items: Sequence[Any]) -> bool:
    """Messages, not calls (a LangChain tool-call dict's `type: 'tool_call'` does not make it one)."""
    return any(is_message(item) for item in items)


def _from_conversation(messages: Any, where: str) -> Expected:
    try:
        trajectory = trajectory_from_messages(messages, agent=None)
    except (ValueError, TypeError) as e:
        raise ValueError(f'{where} is not a list of calls or a conversation: {e}') from None
    calls = [c for c in trajectory.tool_calls if not c.is_output_function]  # answered or not: all were asked for
    for number, call in enumerate(calls):
        if call.arguments is None and call.arguments_problem is not None:  # not "any arguments": unreadable ones
            raise ValueError(f'{where} call {number} ({call.name!r}): arguments {call.arguments_problem}')
    return Expected(tuple(_view(c) for c in calls), _responses(trajectory, calls, trajectory.model_requests))


def _field(item: object, key: str) -> Any:
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def _parse_call(item: object, index: int, where: str, *, expected: bool) -> CallView:
    name = _field(item, 'name')
    if not isinstance(name, str) or not name:
        raise ValueError(
            f'{where}[{index}]: expected a {{"name": str, "arguments": dict}} mapping, got {short_repr(item)}'
        )
    if expected and isinstance(item, Mapping) and (unknown := sorted(map(str, item.keys() - _CALL_KEYS))):
        # a misspelt `arguments` would otherwise expect any arguments at all
        keys = ', '.join(map(repr, unknown))
        raise ValueError(f'{where}[{index}] ({name!r}): unknown key(s) {keys}; a call has name and arguments (or args)')
    args = _field(item, 'arguments')
    if args is None:
        args = _field(item, 'args')
    if args is None:
        return CallView(name, None) if expected else CallView(name, {})
    if isinstance(args, str):
        parsed, problem = parse_arguments(args, quote=True)
        if parsed is None:
            if expected:
                raise ValueError(f'{where}[{index}] ({name!r}): arguments {problem}')
            return CallView(name, None, problem)
        args = parsed
    if not isinstance(args, Mapping):
        raise ValueError(f'{where}[{index}] ({name!r}): arguments must be a mapping, got {short_repr(args)}')
    return CallView(name, dict(args))


def _view(call: ToolCall) -> CallView:
    return CallView(call.name, call.arguments, call.arguments_problem)


@dataclass(frozen=True)
class Actual:
    calls: tuple[CallView, ...]
    responses: tuple[tuple[int, ...], ...] | None


def as_trajectory(actual: object, agent: str | None) -> Trajectory | list[CallView]:
    """A conversation read as a trajectory (its calls attributed to `agent`), or a list of calls parsed."""
    if isinstance(actual, Trajectory):
        return actual
    if isinstance(actual, (str, bytes)) or (isinstance(actual, Sequence) and _is_conversation(actual)):
        return trajectory_from_messages(actual, agent=agent or 'main')
    if isinstance(actual, Sequence) and not isinstance(actual, Mapping):
        return [_parse_call(item, i, 'actual', expected=False) for i, item in enumerate(actual)]
    raise TypeError(f'expected a Trajectory, a conversation or a list of calls, got {type(actual).__name__}')


def actual_calls(
    trajectory: Trajectory, include_failed: bool, agent: str | None, include_subagents: bool, *, responses: bool
) -> Actual:
    """The scoped calls of a trajectory, with the model responses that issued them when asked (only
    `strict` compares responses: the other modes make no request records)."""
    calls = list(trajectory.calls(include_failed=include_failed, agent=agent, include_subagents=include_subagents))
    if not responses:
        return Actual(tuple(_view(c) for c in calls), None)
    requests = trajectory.requests(agent=agent, include_subagents=include_subagents)
    return Actual(tuple(_view(c) for c in calls), _responses(trajectory, calls, requests))


def _responses(
    trajectory: Trajectory, calls: Sequence[ToolCall], requests: Sequence[Any]
) -> tuple[tuple[int, ...], ...] | None:
    """The calls (by position) each model response issued, responses in order; `None` with no responses.

    A call knows its response when the response's output was recorded (`issued_by`); otherwise it
    belongs to the last response that started before it. Responses that issued nothing stay, empty.
    """
    if not requests:
        return None
    position = {id(r): i for i, r in enumerate(trajectory.model_requests)}
    order = [position[id(r)] for r in requests]
    starts = [r.start for r in requests]
    groups: dict[int, list[int]] = {i: [] for i in order}
    before: list[int] = []
    for k, call in enumerate(calls):
        owner = call.issued_by if call.issued_by in groups else None
        if owner is None:
            j = bisect_right(starts, call.start) - 1
            owner = order[j] if j >= 0 else None
        (before if owner is None else groups[owner]).append(k)
    return (*([tuple(before)] if before else []), *(tuple(groups[i]) for i in order))


# -- pairing -----------------------------------------------------------------------------------------


class _Pairing:
    """Which actual call may pair with which expected call, asked once per pair of argument contents.

    Calls of one tool with the same arguments (as `canonical_json` reads them) pair alike, so a long
    run of repeated calls costs one comparison per distinct pair, not one per pair of calls; a tool
    compared by a Python callable is asked per pair of calls (the callable may tell apart what
    `canonical_json` equates).
    """

    def __init__(
        self, actual: Sequence[CallView], expected: Sequence[CallView], matcher_for: Callable[[str], ArgumentMatcher]
    ) -> None:
        self.actual = actual
        self.expected = expected
        self.matcher_for = matcher_for
        self._keys_actual = [self._content(call, i) for i, call in enumerate(actual)]
        self._keys_expected = [self._content(call, i) for i, call in enumerate(expected)]
        self._cache: dict[tuple[object, object], bool] = {}
        self._actual_items: dict[int, frozenset[tuple[str, str]]] = {}
        self._expected_items: dict[int, frozenset[tuple[str, str]]] = {}

    def _content(self, call: CallView, index: int) -> object:
        matcher = self.matcher_for(call.name)
        if matcher.check is not None or any(rule.check is not None for rule in matcher.rules.values()):
            return index
        return call.name, None if call.args is None else canonical_json(call.args), call.problem

    def problems(self, a: int, e: int) -> list[str]:
        call, want = self.actual[a], self.expected[e]
        return self.matcher_for(want.name).problems(call.args, want.args, call.problem)

    def compatible(self, a: int, e: int) -> bool:
        key = (self._keys_actual[a], self._keys_expected[e])
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._compare(a, e)
        return found

    def _compare(self, a: int, e: int) -> bool:
        call, want = self.actual[a], self.expected[e]
        if call.name != want.name:
            return False
        matcher = self.matcher_for(want.name)
        if not matcher.is_simple:
            return matcher.matches(call.args, want.args)
        # A mode alone: the same verdict as `problems`, as set operations on (key, canonical value) pairs.
        if want.args is None or matcher.mode == 'ignore':
            return True
        if call.args is None:
            return False
        got, wanted = self._items(self._actual_items, a, call.args), self._items(self._expected_items, e, want.args)
        if matcher.mode == 'exact':
            return got == wanted
        return got <= wanted if matcher.mode == 'subset' else wanted <= got

    @staticmethod
    def _items(
        cache: dict[int, frozenset[tuple[str, str]]], index: int, args: dict[str, Any]
    ) -> frozenset[tuple[str, str]]:
        items = cache.get(index)
        if items is None:
            items = cache[index] = frozenset((key, canonical_json(value)) for key, value in args.items())
        return items

    def maximum(self, actual: Sequence[int], expected: Sequence[int]) -> dict[int, int]:
        """A maximum pairing, expected index -> actual index, tool by tool."""
        by_tool: dict[str, tuple[list[int], list[int]]] = {}
        for a in actual:
            by_tool.setdefault(self.actual[a].name, ([], []))[0].append(a)
        for e in expected:
            by_tool.setdefault(self.expected[e].name, ([], []))[1].append(e)
        pairs: dict[int, int] = {}
        for tool, (a_side, e_side) in by_tool.items():
            if a_side and e_side:
                pairs.update(self._tool(self.matcher_for(tool), a_side, e_side))
        return pairs

    def _tool(self, matcher: ArgumentMatcher, actual: list[int], expected: list[int]) -> dict[int, int]:
        if matcher.is_plain and all(self.expected[e].args is not None for e in expected):
            return self._by_identity(matcher, actual, expected)
        partners = self._partners(matcher, actual)
        shared: dict[object, list[int]] = {}  # expected calls with the same arguments pair with the same calls
        adjacency: dict[int, list[int]] = {}
        for e in expected:
            key = self._keys_expected[e]
            if key not in shared:
                shared[key] = partners(e)
            adjacency[e] = shared[key]
        return _augmenting(expected, adjacency)

    def _partners(self, matcher: ArgumentMatcher, actual: list[int]) -> Callable[[int], list[int]]:
        """The actual calls that pair with an expected one, in call order. For a mode alone they come
        from an index of (key, value) pairs, so thousands of distinct calls are not compared pairwise."""
        if not matcher.is_simple or matcher.mode not in ('subset', 'superset'):
            return lambda e: [a for a in actual if self.compatible(a, e)]
        index: dict[tuple[str, str], list[int]] = {}
        readable: list[int] = []
        empty: list[int] = []
        for a in actual:
            args = self.actual[a].args
            if args is None:
                continue
            readable.append(a)
            items = self._items(self._actual_items, a, args)
            if not items:
                empty.append(a)
            for item in items:
                index.setdefault(item, []).append(a)

        def partners(e: int) -> list[int]:
            args = self.expected[e].args
            if args is None:
                return list(actual)
            wanted = self._items(self._expected_items, e, args)
            if matcher.mode == 'superset':  # the call holds every wanted pair: look up the rarest, then check
                if not wanted:
                    return readable
                rarest = min((index.get(item, []) for item in wanted), key=len)
                return [a for a in rarest if wanted <= self._actual_items[a]]
            # subset: every pair of the call is wanted, so the call is hit once per pair it has
            hits: Counter[int] = Counter()
            for item in wanted:
                hits.update(index.get(item, ()))
            found = [a for a, count in hits.items() if count == len(self._actual_items[a])]
            return sorted([*found, *empty])

        return partners

    def _by_identity(self, matcher: ArgumentMatcher, actual: list[int], expected: list[int]) -> dict[int, int]:
        """Equal arguments (or any, under `ignore`) are an equivalence: pair each class in order."""

        def identity(content: object) -> object:
            return '' if matcher.mode == 'ignore' else content[1]  # type: ignore[index]  # (name, canonical args, problem)

        free: dict[object, deque[int]] = {}
        for a in actual:
            key = identity(self._keys_actual[a])
            if key is not None:
                free.setdefault(key, deque()).append(a)
        pairs: dict[int, int] = {}
        for e in expected:
            queue = free.get(identity(self._keys_expected[e]))
            if queue:
                pairs[e] = queue.popleft()
        return pairs


def _augmenting(expected: list[int], adjacency: dict[int, list[int]]) -> dict[int, int]:
    """Maximum bipartite matching (Kuhn): a first-fit pairing, then a breadth-first augmenting path
    for every expected call left over. Iterative, so long trajectories cannot hit the recursion limit."""
    of_actual: dict[int, int] = {}
    of_expected: dict[int, int] = {}
    for e in expected:
        for a in adjacency[e]:
            if a not in of_actual:
                of_actual[a], of_expected[e] = e, a
                break
    for root in expected:
        if root in of_expected or not adjacency[root]:
            continue
        reached: dict[int, int] = {}  # actual call -> the expected call that reached it
        queue = deque([root])
        end: int | None = None
        while queue and end is None:
            e = queue.popleft()
            for a in adjacency[e]:
                if a in reached:
                    continue
                reached[a] = e
                if a not in of_actual:
                    end = a
                    break
                queue.append(of_actual[a])
        while end is not None:  # flip the path: each expected call on it takes the next actual call
            e = reached[end]
            previous = of_expected.get(e)
            of_actual[end], of_expected[e] = e, end
            end = None if e == root else previous
    return of_expected


def _in_order(pairing: _Pairing, actual: int, expected: int) -> int | dict[int, int]:
    """The pairing that keeps the expected order (expected -> actual), or the first expected call that
    cannot be placed after the previous one."""
    placed: dict[int, int] = {}
    position = 0
    for e in range(expected):
        while position < actual and not pairing.compatible(position, e):
            position += 1
        if position == actual:
            return e
        placed[e] = position
        position += 1
    return placed


def _strict(pairing: _Pairing, actual: Actual, expected: Expected) -> str | None:
    """Why the responses differ under `strict`, or `None` when they match.

    With response structure on both sides, responses pair in order, empty ones included. When one
    side has none (a flat list of calls, or spans without model requests), its calls are cut to the
    other side's responses that issued calls, in order.
    """
    n_actual, n_expected = len(actual.calls), len(expected.calls)
    a_groups, e_groups = actual.responses, expected.responses
    if a_groups is None or e_groups is None:
        if n_actual != n_expected:
            return f'expected {n_expected} call(s) in order, got {n_actual}'
        shape = [g for g in (a_groups or e_groups or tuple((i,) for i in range(n_actual))) if g]
        a_groups = e_groups = _cut(shape)
    elif len(a_groups) != len(e_groups):
        return f'expected {len(e_groups)} model response(s), got {len(a_groups)}'
    for number, (a_group, e_group) in enumerate(zip(a_groups, e_groups, strict=True), start=1):
        if len(a_group) != len(e_group) or len(pairing.maximum(a_group, e_group)) != len(e_group):
            wanted = ', '.join(show(expected.calls[e]) for e in e_group) or 'no calls'
            got = ', '.join(show(actual.calls[a]) for a in a_group) or 'no calls'
            return f'response {number}: expected {wanted}; got {got}'
    return None


def _cut(groups: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """Consecutive positions cut to the sizes of `groups` (whose positions are consecutive already)."""
    result: list[tuple[int, ...]] = []
    start = 0
    for group in groups:
        result.append(tuple(range(start, start + len(group))))
        start += len(group)
    return tuple(result)


# -- the metric ----------------------------------------------------------------------------------------


def tool_call_match(
    actual: Trajectory | Sequence[Any] | str,
    expected_calls: Sequence[Any] | str,
    *,
    mode: ToolCallMatchMode = 'strict',
    arguments: ArgumentsMode = 'exact',
    tool_arguments: Mapping[str, Any] | None = None,
    argument_rules: Mapping[str, Mapping[str, Any]] | None = None,
    include_failed: bool = False,
    agent: str | None = None,
    include_subagents: bool = True,
) -> ToolCallMatchResult:
    """Whether the calls match `expected_calls` under `mode`, with a reason listing the pairing.

    `actual` is a `Trajectory`, a conversation (pydantic-ai, OpenAI chat or ragas messages) or a list
    of `{"name", "arguments"}` calls; `expected_calls` a list of such calls (arguments optional) or a
    conversation, or a list of those, one per turn (the value is then the share of turns that match).
    `arguments` is the default argument comparison, `tool_arguments` overrides it per tool (a mode, a
    list of dotted keys compared alone, or a callable `(actual, expected) -> bool`), and
    `argument_rules` loosens single keys (`{tool or '*': {dotted.key: rule}}`). See `ToolCallMatch`.
    """
    config = parse_config(expected_calls, mode, arguments, tool_arguments, argument_rules)
    return config.score(as_trajectory(actual, agent), include_failed, agent, include_subagents)


@dataclass(frozen=True)
class Config:
    """A `ToolCallMatch` configuration, checked and parsed once."""

    expected: Expected | tuple[Expected, ...]
    mode: ToolCallMatchMode
    arguments: ArgumentsMode
    default: ArgumentMatcher
    matchers: dict[str, ArgumentMatcher] = field(default_factory=dict[str, ArgumentMatcher])

    @property
    def per_turn(self) -> bool:
        return isinstance(self.expected, tuple)

    def matcher_for(self, tool: str) -> ArgumentMatcher:
        return self.matchers.get(tool, self.default)

    def score(
        self, actual: Trajectory | list[CallView], include_failed: bool, agent: str | None, include_subagents: bool
    ) -> ToolCallMatchResult:
        scope = scope_suffix(agent, include_subagents)
        if isinstance(actual, Trajectory) and (missing := missing_agent(actual, agent)) is not None:
            return ToolCallMatchResult(0.0 if self.per_turn else False, missing)
        if (
            isinstance(actual, Trajectory)
            and actual.call_count(include_failed=True) == 0
            and (note := actual.unrecorded('tool calls')) is not None
        ):  # a subset (or an empty expectation) would pass on calls the trace cannot show
            return ToolCallMatchResult(0.0 if self.per_turn else False, f'no tool call counted: {note}')
        if not isinstance(self.expected, tuple):
            calls = (
                actual_calls(actual, include_failed, agent, include_subagents, responses=self.mode == 'strict')
                if isinstance(actual, Trajectory)
                else Actual(tuple(actual), None)
            )
            return match_calls(calls, self.expected, self.mode, self.arguments, self.matcher_for, scope)
        if not isinstance(actual, Trajectory):
            raise TypeError('expected calls per turn need a Trajectory or a conversation, not a list of calls')

        def score_turn(turn: Trajectory, expected: Expected) -> ToolCallMatchResult:
            calls = actual_calls(turn, include_failed, agent, include_subagents, responses=self.mode == 'strict')
            return match_calls(calls, expected, self.mode, self.arguments, self.matcher_for)

        mean, reason, results = score_turns(actual, self.expected, score_turn)
        return ToolCallMatchResult(mean, reason + scope, turns=tuple(results))


def parse_config(
    expected_calls: object, mode: object, arguments: object, tool_arguments: object, argument_rules: object
) -> Config:
    """Check and parse a configuration; `ValueError` naming the field and item."""
    if mode not in MODES or isinstance(mode, bool):
        raise ValueError(f'mode must be one of {", ".join(map(repr, MODES))}; got {mode!r}')
    default, matchers = parse_matchers(arguments, tool_arguments, argument_rules)
    return Config(parse_expected(expected_calls), mode, default.mode, default, matchers)


def match_calls(
    actual: Actual,
    expected: Expected,
    mode: ToolCallMatchMode,
    arguments: ArgumentsMode,
    matcher_for: Callable[[str], ArgumentMatcher],
    scope: str = '',
) -> ToolCallMatchResult:
    """`tool_call_match` on parsed inputs (the evaluator parses its configuration once)."""
    pairing = _Pairing(actual.calls, expected.calls, matcher_for)
    n_actual, n_expected = len(actual.calls), len(expected.calls)
    best = pairing.maximum(range(n_actual), range(n_expected))
    missing = [e for e in range(n_expected) if e not in best]
    paired = set(best.values())
    extra = [a for a in range(n_actual) if a not in paired]
    problem: str | None = None
    if mode == 'strict':
        problem = _strict(pairing, actual, expected)
    elif mode in ('superset', 'unordered', 'in_order') and missing:
        problem = f'{len(missing)} of {n_expected} expected call(s) not made'
    if problem is None and mode in ('subset', 'unordered') and extra:
        problem = f'{len(extra)} of {n_actual} call(s) not expected'
    if problem is None and mode == 'in_order':
        ordered = _in_order(pairing, n_actual, n_expected)
        if isinstance(ordered, int):
            call = show(expected.calls[ordered])
            problem = f'{call} (expected call {ordered + 1}) is not made after the calls expected before it'
        else:  # show the pairing that keeps the order, not just any pairing
            best = ordered
            paired = set(best.values())
            extra = [a for a in range(n_actual) if a not in paired]
    mismatches = _mismatches(pairing, missing, extra)
    head = f'{"match" if problem is None else "no match"} ({mode}, arguments {arguments}): '
    head += f'{n_expected} expected, {n_actual} actual call(s)' if problem is None else problem
    pairs = sorted(best.items())
    reason = head + _sections(
        ('paired', [_pair(expected.calls[e], actual.calls[a]) for e, a in pairs]),
        ('missing', [show(expected.calls[e]) for e in missing]),
        ('extra', [show(actual.calls[a]) for a in extra]),
        (
            'argument mismatches',
            [f'{show(expected.calls[e])} vs {show(actual.calls[a])}: {", ".join(p)}' for e, a, p in mismatches],
        ),
    )
    return ToolCallMatchResult(
        problem is None,
        reason + scope,
        pairs=tuple(pairs),
        missing=tuple(missing),
        extra=tuple(extra),
        mismatches=tuple((e, a, tuple(p)) for e, a, p in mismatches),
        expected=expected.calls,
        actual=actual.calls,
    )


def _mismatches(pairing: _Pairing, missing: list[int], extra: list[int]) -> list[tuple[int, int, list[str]]]:
    """Unpaired calls of the same tool, side by side in call order, with their argument differences."""
    found: list[tuple[int, int, list[str]]] = []
    spare: dict[str, deque[int]] = {}
    for a in extra:
        spare.setdefault(pairing.actual[a].name, deque()).append(a)
    for e in missing:
        queue = spare.get(pairing.expected[e].name)
        if queue:
            a = queue.popleft()
            found.append((e, a, pairing.problems(a, e)))
    return found


def _pair(expected: CallView, actual: CallView) -> str:
    """A paired call once when both sides read the same, else `expected ~ actual`."""
    wanted, made = show(expected), show(actual)
    return wanted if wanted == made else f'{wanted} ~ {made}'


def show(call: CallView) -> str:
    """`name(key=value, ...)`, each value cut short; `name(...)` when any arguments would do."""
    if call.args is None:
        return f'{call.name}(...)' if call.problem is None else f'{call.name}(<arguments {call.problem}>)'
    shown = f'{call.name}({", ".join(f"{k}={short_repr(v, 60)}" for k, v in sorted(call.args.items()))})'
    return shown if len(shown) <= 200 else shown[:197] + '...'


def _sections(*parts: tuple[str, list[str]]) -> str:
    """`call_matching.sections` of lists cut at `LISTED` items."""
    return sections(*((label, _listed(items)) for label, items in parts))


def _listed(items: list[str]) -> str:
    more = f', and {len(items) - LISTED} more' if len(items) > LISTED else ''
    return ', '.join(items[:LISTED]) + more
