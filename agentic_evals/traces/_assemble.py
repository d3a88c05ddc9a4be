"""Collect decoded spans per trace and turn each finished trace into a `LoadedTrace`.

Decoders hand every span to the `Assembler` with its location (file index, line or None). The
recoverable problems found here (duplicate span ids, missing parents, parent cycles, children
starting before their parents) become warnings on the trace, each naming the file and line where
it was seen. Problems that belong to no trace that has spans (a trace all of whose spans were
lost, a skipped file) go to the load's `on_warning` callback instead: nothing is dropped unsaid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic_evals.otel.span_tree import SpanNode, SpanTree

Location = tuple[int, 'int | None']
"""Where a span was read: index of the file in the load, and its 1-based line (None for documents)."""


@dataclass(frozen=True)
class LoadedTrace:
    """One trace read from trace files, as the pydantic-evals `SpanTree` every evaluator reads.

    `sources` are the files its spans came from, in the order first seen; `warnings` are the
    recoverable problems found in it, each naming the file and line.
    """

    trace_id: str
    tree: SpanTree
    sources: tuple[Path, ...]
    warnings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The first source's file name without any extensions: `run1.otlp.json.gz` -> `run1`.

        Matches a pydantic-evals case of the same name.
        """
        return self.sources[0].name.partition('.')[0] if self.sources else self.trace_id


def _start(node: SpanNode) -> datetime:
    return node.start_timestamp


def _linked_tree(trace_int: int, nodes: dict[int, SpanNode]) -> SpanTree:
    """The `SpanTree` that `SpanTree().add_spans(list(nodes.values()))` builds, linked here in one pass.

    `add_spans` formats every node's key (trace id and span id in hex) three times and its parent's
    key twice, over a tenth of the time loading took; here the trace's part of the key is formatted
    once, each span id once, and parents are found by span id (`nodes` holds one trace's spans, by
    span id). The same order: spans sorted (stably) by start, children in that order.
    """
    ordered = sorted(nodes.values(), key=_start)
    prefix = f'{trace_int:032x}:'
    keys = [f'{prefix}{node.span_id:016x}' for node in ordered]
    roots: list[SpanNode] = []
    for key, node in zip(keys, ordered, strict=True):
        parent = nodes.get(node.parent_span_id) if node.parent_span_id is not None else None
        if parent is None:
            roots.append(node)
        else:
            parent.children_by_id[key] = node
            node.parent = parent
    tree = SpanTree()
    tree.nodes_by_id = dict(zip(keys, ordered, strict=True))
    tree.roots = roots
    return tree


def _added_tree(trace_int: int, nodes: dict[int, SpanNode]) -> SpanTree:
    tree = SpanTree()
    tree.add_spans(list(nodes.values()))
    return tree


def _tree_shape(tree: SpanTree) -> object:
    """Everything `SpanTree` and `SpanNode` hold after building, with nodes named by key: to compare two builds."""
    key = {id(node): node_key for node_key, node in tree.nodes_by_id.items()}

    def named(value: object) -> object:
        if isinstance(value, SpanNode):
            return key.get(id(value), '?')
        if isinstance(value, dict):
            return [(name, named(item)) for name, item in value.items()]
        if isinstance(value, list):
            return [named(item) for item in value]
        return value

    nodes = [
        (node_key, sorted((name, named(value)) for name, value in vars(node).items()))
        for node_key, node in tree.nodes_by_id.items()
    ]
    return sorted((name, named(value)) for name, value in vars(tree).items()), nodes


def _pick_tree_builder() -> Callable[[int, dict[int, SpanNode]], SpanTree]:
    """`_linked_tree` if it builds what `add_spans` does on a sample with every case, else `add_spans` itself.

    `_linked_tree` sets pydantic-evals' attributes directly; a release that keeps more state
    while building (or builds differently) fails the comparison, and trees are then built its way.
    """
    epoch = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def sample() -> dict[int, SpanNode]:
        spans = [(5, None, 3), (2, 5, 4), (9, 5, 4), (7, 2, 6), (3, 42, 1), (8, None, 0)]  # id, parent, start
        return {
            span_id: SpanNode(
                name=f'span {span_id}',
                trace_id=0xABC,
                span_id=span_id,
                parent_span_id=parent,
                start_timestamp=epoch + timedelta(seconds=start),
                end_timestamp=epoch + timedelta(seconds=start + 1),
                attributes={},
            )
            for span_id, parent, start in spans
        }

    try:
        same = _tree_shape(_linked_tree(0xABC, sample())) == _tree_shape(_added_tree(0xABC, sample()))
    except Exception:  # pragma: no cover - a pydantic-evals without these attributes
        same = False
    return _linked_tree if same else _added_tree  # pragma: no branch


span_tree = _pick_tree_builder()
"""Build one trace's `SpanTree` from its spans by span id (see `_linked_tree`)."""


class TraceBuilder:
    """The spans of one trace read so far, keyed by span id (the first of duplicates wins)."""

    __slots__ = ('assembler', 'files', 'nodes', 'raw_ids', 'trace_id', 'trace_int', 'warnings', 'where')

    def __init__(self, assembler: Assembler, trace_id: str) -> None:
        self.assembler = assembler
        self.trace_id = trace_id
        self.trace_int = int(trace_id, 16)
        self.nodes: dict[int, SpanNode] = {}
        self.where: dict[int, Location] = {}
        self.files: dict[int, None] = {}
        self.warnings: list[str] = []
        self.raw_ids: list[object] = []
        """The trace id as files spell it (any case, bytes), each an alias in `Assembler.aliases`."""

    def add(self, node: SpanNode, location: Location) -> None:
        span_id = node.span_id
        if span_id in self.nodes:
            first = self.where[span_id]
            self.warn(
                location,
                f'duplicate span id {span_id:016x} ({node.name!r}); kept the first one, '
                f'from {self.assembler.describe(first)}',
            )
            return
        self.nodes[span_id] = node
        self.where[span_id] = location
        if location[0] not in self.files:
            self.files[location[0]] = None

    def warn(self, location: Location, message: str) -> None:
        self.warnings.append(f'{self.assembler.describe(location)}: {message}')

    def _break_cycles(self) -> None:
        """Make one span of every parent cycle a root, so every walk up a tree ends (linear time).

        Each span is followed up its parents once: a chain ends at a root, at a span already
        placed, or back on itself, which is a cycle. Its earliest span becomes the root.
        """
        nodes = self.nodes
        placed: set[int] = set()
        for start in nodes:
            chain: dict[int, None] = {}
            current: int | None = start
            while current is not None and current not in placed and current not in chain:
                chain[current] = None
                parent = nodes[current].parent_span_id
                current = parent if parent in nodes else None
            if current is not None and current in chain:
                members = list(chain)
                cycle = members[members.index(current) :]
                root = nodes[min(cycle, key=lambda span_id: (nodes[span_id].start_timestamp, span_id))]
                root.parent_span_id = None
                if len(cycle) == 1:
                    what = 'is its own parent'
                else:
                    shown = ' -> '.join(f'{span_id:016x}' for span_id in cycle[:5]) + (' ...' if len(cycle) > 5 else '')
                    what = f'is in a parent cycle of {len(cycle)} spans ({shown})'
                self.warn(
                    self.where[root.span_id], f'span {root.span_id:016x} ({root.name!r}) {what}; it became a root'
                )
            placed.update(chain)

    def finish(self) -> LoadedTrace:
        nodes = self.nodes
        unordered = False
        early: list[tuple[SpanNode, SpanNode]] = []
        for node in nodes.values():
            parent_id = node.parent_span_id
            if parent_id is None:
                continue
            parent = nodes.get(parent_id)
            if parent is None:
                self.warn(
                    self.where[node.span_id],
                    f'span {node.span_id:016x} ({node.name!r}) has parent {parent_id:016x}, '
                    'which is not in the trace; it became a root',
                )
            elif node.start_timestamp <= parent.start_timestamp:
                unordered = True
                if node.start_timestamp < parent.start_timestamp:
                    early.append((node, parent))
        if unordered:  # every child starting after its parent rules out a cycle
            self._break_cycles()
        for node, parent in early:
            if node.parent_span_id is not None:  # not a root now, after a cycle was broken
                self.warn(
                    self.where[node.span_id],
                    f'span {node.span_id:016x} ({node.name!r}) starts before its parent {parent.span_id:016x} '
                    f'({parent.name!r}); kept as recorded',
                )
        paths = self.assembler.paths
        return LoadedTrace(
            trace_id=self.trace_id,
            tree=span_tree(self.trace_int, nodes),
            sources=tuple(paths[index] for index in self.files),
            warnings=tuple(self.warnings),
        )


class Assembler:
    """The traces being read, by normalized (32 lowercase hex) trace id, in order of first span."""

    def __init__(self, paths: list[Path], on_warning: Callable[[str], None]) -> None:
        self.paths = paths
        self.on_warning = on_warning
        """Where the warnings no loaded trace can carry go (see the module docstring)."""
        self.builders: dict[str, TraceBuilder] = {}
        self.aliases: dict[object, TraceBuilder] = {}
        """Open builders by raw trace id, so decoders validate and normalize an id once per trace."""

    def builder(self, trace_id: str) -> TraceBuilder:
        """The builder of a normalized trace id, created on its first span."""
        builder = self.builders.get(trace_id)
        if builder is None:
            builder = self.builders[trace_id] = TraceBuilder(self, trace_id)
        return builder

    def builder_for(self, raw: object, key: Callable[[object], str]) -> TraceBuilder:
        """The builder of a trace id as a file spells it; `key` validates and normalizes it."""
        builder = self.aliases.get(raw)
        if builder is None:
            builder = self.builder(key(raw))
            builder.raw_ids.append(raw)
            self.aliases[raw] = builder
        return builder

    def pop(self, trace_id: str) -> LoadedTrace | None:
        """The finished trace, now that its last span has been read (None if it had no spans).

        A trace with warnings but no spans (all of them lost) is not yielded; its warnings go
        to `on_warning`.
        """
        builder = self.builders.pop(trace_id, None)
        if builder is None:
            return None
        for raw in builder.raw_ids:
            del self.aliases[raw]
        if not builder.nodes:
            for warning in builder.warnings:
                self.on_warning(f'{warning} (trace {trace_id}, which has no other spans)')
            return None
        return builder.finish()

    def drop(self, trace_id: str) -> None:
        """Forget a trace read only because its spans shared a unit with wanted ones (a partitioned load)."""
        builder = self.builders.pop(trace_id, None)
        if builder is not None:
            for raw in builder.raw_ids:
                del self.aliases[raw]

    def note(self, location: Location, message: str) -> None:
        """A warning that belongs to no trace, straight to `on_warning`."""
        self.on_warning(f'{self.describe(location)}: {message}')

    def rest(self) -> Iterator[LoadedTrace]:
        """The traces still open at the end, in order of their first span."""
        while self.builders:
            trace = self.pop(next(iter(self.builders)))
            if trace is not None:
                yield trace

    def describe(self, location: Location) -> str:
        index, line = location
        return f'{self.paths[index]}' if line is None else f'{self.paths[index]}:{line}'
