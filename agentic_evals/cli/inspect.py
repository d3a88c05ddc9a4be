"""`agentic-evals-otel inspect`: a trace's extracted trajectory, shown as evaluators see it.

Only the records `extract_trajectory` yields are shown (agent runs, tool call attempts, model
requests), nested by the spans that contain them: a sub-agent under the tool call that delegated
to it, calls and requests under their agent run. The footer lists the tool-name sequences the
trajectory evaluators compare, the spans extraction skipped and the loader's warnings, so a
surprising score can be traced to what was (or was not) in the spans.

Text from traces is shown as text: every name, argument, result, note and warning passes through
`visible` (escape sequences escaped) into a rich `Text` (never markup). pydantic-evals and rich
are imported when a command runs, not on import: `--help` must stay cheap.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..views.text import visible
from .common import EXIT_PASS, UsageError

if TYPE_CHECKING:
    from pydantic_evals.otel.span_tree import SpanNode, SpanTree
    from rich.console import RenderableType
    from rich.text import Text
    from rich.tree import Tree

    from ..traces import LoadedTrace
    from ..trajectory.records import AgentRun, ModelRequest, ToolCall
    from ..trajectory.trajectory import Trajectory

    Item = AgentRun | ToolCall | ModelRequest

PREVIEW = 120
"""Characters of arguments and results shown without `--full`."""

_RAW_IN_JSON = re.compile('[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]')
"""What `json.dumps(ensure_ascii=False)` leaves raw but a terminal acts on (C1 controls such as the
one-byte CSI, bidi overrides) or no encoding can write (lone surrogates): written as `\\uXXXX`."""


def json_line(data: object) -> str:
    """`data` as one JSON line that is safe to print: non-ASCII text kept, active characters escaped."""
    return _RAW_IN_JSON.sub(lambda m: f'\\u{ord(m[0]):04x}', json.dumps(data, ensure_ascii=False))


def load_traces(*patterns: str) -> Iterator[LoadedTrace]:
    """`agentic_evals.traces.load_traces`, imported when `inspect` runs (a name tests can patch)."""
    from ..traces import load_traces as load
    from ..views.text import one_line
    from .common import PROG, say

    return load(*patterns, on_warning=lambda message: say(one_line(f'{PROG}: warning: {message}')))


def trace_name(trace: LoadedTrace) -> str:
    """The trace's name as `run` gives it: its root's `case_name` (pydantic-evals' case span), else its file's."""
    from ..conventions.pydantic_evals import CASE_NAME

    found = (v for root in trace.tree.roots if isinstance(v := root.attributes.get(CASE_NAME), str))
    return next(found, trace.name)


def render_trace(trace: LoadedTrace, *, full: bool = False) -> RenderableType:
    """The trajectory tree of `trace` followed by its summary, scored sequences, notes and warnings."""
    from rich.console import Group
    from rich.text import Text
    from rich.tree import Tree

    from ..trajectory.extract import extract_trajectory

    trajectory = extract_trajectory(trace.tree)
    sources = visible(', '.join(str(s) for s in trace.sources), newlines=False)
    spans = len(trace.tree.nodes_by_id)
    name = visible(trace_name(trace), newlines=False)
    root = Tree(Text.assemble(('trace ', 'bold'), (trace.trace_id, 'bold cyan'), f'  {name} ({spans} spans)'))
    if sources:
        root.add(Text(f'from {sources}', style='dim'))
    layout = _Layout(trace.tree, trajectory)
    layout.attach(root, None, full=full)
    return Group(root, *_footer(trace, trajectory))


class _Layout:
    """Which record goes under which: the nearest enclosing agent run or tool call span."""

    def __init__(self, tree: SpanTree, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self.call_index = {id(c): i for i, c in enumerate(trajectory.tool_calls)}
        self.request_index = {id(r): i for i, r in enumerate(trajectory.model_requests)}
        nodes = {node.span_id: node for node in tree}
        containers = {a.span_id for a in trajectory.agents} | {c.span_id for c in trajectory.tool_calls}
        self.children: dict[int | None, list[Item]] = {}
        items: list[Item] = [*trajectory.agents, *trajectory.tool_calls, *trajectory.model_requests]
        for item in items:
            parent = _container(nodes.get(item.span_id), containers)
            self.children.setdefault(parent, []).append(item)

    def attach(self, branch: Tree, span_id: int | None, *, full: bool) -> None:
        from rich.text import Text

        from ..trajectory.records import ToolCall

        for item in _ordered(self.children.get(span_id, [])):
            sub = branch.add(self._label(item, full=full))
            if isinstance(item, ToolCall) and item.result is not None:
                sub.add(Text.assemble(('result: ', 'dim'), _preview(item.result, full)))
            self.attach(sub, item.span_id, full=full)

    def _label(self, item: Item, *, full: bool) -> Text:
        from rich.text import Text

        from ..trajectory.records import AgentRun, ToolCall

        if isinstance(item, AgentRun):
            name = visible(item.name, newlines=False)
            return Text.assemble(('agent ', 'bold'), (name, 'bold magenta'), f'  {_duration(item.end - item.start)}')
        if isinstance(item, ToolCall):
            return _call_label(item, self.call_index[id(item)], full=full)
        return _request_label(item, self.request_index[id(item)])


def _container(node: SpanNode | None, containers: set[int]) -> int | None:
    current = node.parent if node is not None else None
    while current is not None:
        if current.span_id in containers:
            return current.span_id
        current = current.parent
    return None


def _ordered(items: list[Item]) -> list[Item]:
    """Start order, except that tool calls keep the trajectory's order (the order the model issued them)."""
    from ..trajectory.records import ToolCall

    calls = [i for i in items if isinstance(i, ToolCall)]
    others = sorted((i for i in items if not isinstance(i, ToolCall)), key=lambda i: i.start)
    merged: list[Item] = []
    while calls and others:
        merged.append(others.pop(0) if others[0].start < calls[0].start else calls.pop(0))
    return [*merged, *others, *calls]


_STATUS_STYLE = {'ok': 'green', 'failed': 'bold red', 'deferred': 'yellow'}


def _call_label(call: ToolCall, index: int, *, full: bool) -> Text:
    from rich.text import Text

    status = call.status if call.failure_stage is None else f'{call.status} ({call.failure_stage})'
    parts: list[str | tuple[str, str]] = [
        (f'call {index}: ', 'dim'),
        (visible(call.name, newlines=False), 'bold'),
        ' ',
        (status, _STATUS_STYLE[call.status]),
    ]
    if call.is_output_function:
        parts.append((' output function', 'cyan'))
    parts += ['  ', _arguments(call, full), f'  {_duration(call.duration)}']
    return Text.assemble(*parts)


def _arguments(call: ToolCall, full: bool) -> str:
    if call.arguments is not None:
        return _preview(json.dumps(call.arguments, ensure_ascii=False, default=str), full)
    if call.raw_arguments is not None:
        return f'{_preview(call.raw_arguments, full)} (arguments {visible(call.arguments_problem or "")})'
    return '(arguments not recorded)'


def _request_label(request: ModelRequest, index: int) -> Text:
    from rich.text import Text

    tokens = f'{request.input_tokens:,} in / {request.output_tokens:,} out tokens'
    if request.cache_read_tokens or request.cache_write_tokens:
        tokens += f' (cache {request.cache_read_tokens:,} read / {request.cache_write_tokens:,} write)'
    cost = f', ${request.cost:.6f}' if request.cost is not None else ''
    return Text.assemble(
        (f'request {index}: ', 'dim'),
        (visible(request.model or '(model not recorded)', newlines=False), 'blue'),
        f' {request.operation}, {tokens}{cost}  {_duration(request.end - request.start)}',
    )


def _footer(trace: LoadedTrace, trajectory: Trajectory) -> Iterator[Text]:
    from rich.text import Text

    calls = trajectory.tool_calls
    counts = {s: sum(c.status == s and not c.is_output_function for c in calls) for s in ('ok', 'failed', 'deferred')}
    outputs = sum(c.is_output_function for c in calls)
    requests = trajectory.model_requests
    yield Text(
        f'{len(requests)} model request(s): {sum(r.input_tokens for r in requests):,} input /'
        f' {sum(r.output_tokens for r in requests):,} output tokens; {len(calls)} tool call attempt(s):'
        f' {counts["ok"]} ok, {counts["failed"]} failed, {counts["deferred"]} deferred,'
        f' {outputs} output function(s)'
    )
    yield Text(f'instrumentation: {", ".join(trajectory.families) or "none recognised"}')
    if (account := trajectory.account) is not None:
        yield Text(f'account: {visible(account.summary(), newlines=False)}')
    from ..conventions.sessions import conversation_id

    conversation = conversation_id(trace.tree)
    if conversation is not None:  # what `run --group-by conversation` merges this trace by
        yield Text(f'conversation: {visible(conversation, newlines=False)}')
    yield Text(f'scored tool calls: {_names(trajectory.calls())}')
    yield Text(f'with include_failed=True: {_names(trajectory.calls(include_failed=True))}')
    for note in trajectory.notes:
        yield Text(f'note: {visible(note, newlines=False)}', style='yellow')
    for warning in trace.warnings:
        yield Text(f'warning: {visible(warning, newlines=False)}', style='yellow')


def _names(calls: Sequence[ToolCall]) -> str:
    return visible(repr([c.name for c in calls]), newlines=False)


def _preview(text: str, full: bool) -> str:
    """Arguments or a result, escaped (`visible`); on one line and shortened unless `full`."""
    flat = ' '.join(text.split()) if not full else text
    shown = flat if full or len(flat) <= PREVIEW else flat[: PREVIEW - 3] + '...'
    return visible(shown)


def _duration(delta: timedelta) -> str:
    from ..reports.gates import format_duration  # the one duration format of every view

    return format_duration(delta.total_seconds())


def trace_json(trace: LoadedTrace) -> dict[str, Any]:
    """The trace's trajectory records as JSON-ready data (datetimes as ISO 8601 strings)."""
    from pydantic_core import to_jsonable_python

    from ..conventions.sessions import conversation_id
    from ..trajectory.extract import extract_trajectory

    trajectory = extract_trajectory(trace.tree)
    data: dict[str, Any] = {
        'trace_id': trace.trace_id,
        'name': trace_name(trace),
        'sources': [str(s) for s in trace.sources],
        'warnings': list(trace.warnings),
        'conversation_id': conversation_id(trace.tree),
        'trajectory': {
            'tool_calls': list(trajectory.tool_calls),
            'model_requests': list(trajectory.model_requests),
            'agents': list(trajectory.agents),
            'notes': list(trajectory.notes),
            'families': list(trajectory.families),
            'account': trajectory.account,
        },
    }
    return dict(to_jsonable_python(data))


def add_parser(commands: Any) -> None:
    inspect = commands.add_parser(
        'inspect',
        help='show the trajectory extracted from trace files, as the evaluators see it',
        description=(
            'Show each trace as a tree: agent runs (sub-agents nested under the tool call that delegated), tool'
            ' calls with status, failure stage, arguments and duration, model requests with tokens; then the'
            ' tool-name sequences the evaluators compare, skipped spans and loader warnings.'
        ),
        epilog=(
            'exit status: 0 shown, 2 usage or load error (or no trace matched --trace-id), 3 internal error (a bug),'
            ' 130 interrupted'
        ),
    )
    inspect.add_argument('traces', nargs='+', metavar='TRACES', help='trace files, directories or globs')
    inspect.add_argument('--trace-id', metavar='ID', help='show only the trace whose id starts with ID')
    inspect.add_argument('--full', action='store_true', help='show arguments and results in full, not shortened')
    inspect.add_argument(
        '--json', action='store_true', help='print each trajectory as one line of JSON (JSON Lines) instead of a tree'
    )
    inspect.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..views.table import make_console

    console = make_console(sys.stdout)
    wanted = args.trace_id.lower() if args.trace_id else None
    shown = 0
    for trace in load_traces(*args.traces):
        if wanted is not None and not trace.trace_id.lower().startswith(wanted):
            continue
        shown += 1
        if args.json:
            print(json_line(trace_json(trace)))
        else:
            console.print(render_trace(trace, full=args.full))
            console.print()
    if not shown:
        which = f'with an id starting {args.trace_id!r} ' if wanted else ''
        raise UsageError(f'no trace {which}found in {", ".join(args.traces)}')
    return EXIT_PASS
