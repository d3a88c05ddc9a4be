"""Fuzzing the trace loaders: mutated fixture files of every format must load or fail cleanly.

A seeded mutator (no hypothesis: every case is reproducible from its number alone) takes a
fixture (`fixtures/scenario/*`, `fixtures/support/*`: JSON lines, JSON document, protobuf,
Jaeger, gzipped or not) and applies one mutation: a truncation, flipped bytes, a spliced range,
a value of the wrong JSON type, a removed, renamed or repeated key, deep nesting, a parent
cycle, a huge or non-finite number, a duplicated span, many roots. Then it loads the file and
checks the loader's promises:

- only `FileError` is raised, never another exception, and its message is one line naming the
  file and a line or byte offset (except for a file with nothing in it);
- every load finishes within `SECONDS_PER_LOAD` of CPU time, and (every `MEMORY_EVERY`th case)
  allocates no more than a bound proportional to the input's decompressed size;
- every span the input holds (counted at the places each format keeps spans, a repeated key's
  values included, when it names its trace) is in a loaded tree or named in a warning.

`AGENTIC_EVALS_FUZZ_CASES` sets the number of cases (default `CASES`, about 20 seconds here;
`make fuzz` runs thousands), `AGENTIC_EVALS_FUZZ_SEED` the seed, `AGENTIC_EVALS_FUZZ_CASE` one
case to replay. With `AGENTIC_EVALS_FUZZ_EXTRACT=1`, every loaded tree also goes through
`extract_trajectory`, and the file through `inspect` and `inspect --json`, which must neither
raise nor end in an internal error (exit status 3).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import unknown_fields  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ScopeSpans

from agentic_evals import FileError, LoadedTrace, read_traces

CASES = int(os.environ.get('AGENTIC_EVALS_FUZZ_CASES', '300'))
SEED = int(os.environ.get('AGENTIC_EVALS_FUZZ_SEED', '20240601'))
ONE_CASE = os.environ.get('AGENTIC_EVALS_FUZZ_CASE')
EXTRACT = os.environ.get('AGENTIC_EVALS_FUZZ_EXTRACT') == '1'
SECONDS_PER_LOAD = 5.0

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = [
    *sorted(
        path
        for folder in ('scenario', 'support')
        for path in (ROOT / 'fixtures' / folder).iterdir()
        if '.otlp.' in path.name or '.jaeger.' in path.name
    ),
    ROOT / 'tests' / 'traces' / 'data' / 'tempo.json',  # Grafana Tempo's `{"batches": [...]}`
]
MEMORY_EVERY = 10
"""Every this many cases, the load's peak memory is measured (tracemalloc slows it several times)."""
BYTES_PER_INPUT_BYTE = 200
MEMORY_FLOOR = 32 * 2**20
"""A load may allocate at most `MEMORY_FLOOR` plus `BYTES_PER_INPUT_BYTE` per byte of (decompressed) input."""


class Obj(list[tuple[str, Any]]):
    """A JSON object as its (key, value) pairs, so that a mutation can repeat a key."""


@dataclass
class Raw:
    """JSON text written as it is (deep nesting, numbers `json` cannot write)."""

    text: str


def dump(value: Any, indent: int | None, level: int = 0) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, (Obj, list)):
        if isinstance(value, Obj):
            items = [f'{json.dumps(key)}: {dump(item, indent, level + 1)}' for key, item in value]
            opening, closing = '{', '}'
        else:
            items = [dump(item, indent, level + 1) for item in value]
            opening, closing = '[', ']'
        if not items:
            return opening + closing
        if indent is None:
            return opening + ','.join(items) + closing
        inner = '\n' + ' ' * (indent * (level + 1))
        return opening + inner + (',' + inner).join(items) + '\n' + ' ' * (indent * level) + closing
    return json.dumps(value)


def parse(text: bytes) -> Any:
    return json.loads(text, object_pairs_hook=Obj)


# ------------------------------------------------------------------------------------------
# What the input holds: spans at the places each format keeps them (every value of a repeated key)
# ------------------------------------------------------------------------------------------


def _values(obj: Any, key: str) -> list[Any]:
    return [value for name, value in obj if name == key] if isinstance(obj, Obj) else []


def _objects(value: Any) -> list[Any]:
    return [item for item in value if isinstance(item, Obj)] if isinstance(value, list) else []


def _spans_in(value: Any) -> int:
    """Span objects in a `spans` list that name their trace: the loader counts trace id keys (see `Reader.decode`)."""
    return sum(
        any(key in ('traceId', 'traceID') and isinstance(item, str) for key, item in span) for span in _objects(value)
    )


def count_json_spans(value: Any) -> int:
    if isinstance(value, list) and not isinstance(value, Obj):
        return sum(count_json_spans(item) for item in value)
    if not isinstance(value, Obj):
        return 0
    keys = {name for name, _ in value}
    count = 0
    for resources in _values(value, 'resourceSpans') + _values(value, 'batches'):
        for resource in _objects(resources):
            for scopes in _values(resource, 'scopeSpans') + _values(resource, 'instrumentationLibrarySpans'):
                for scope in _objects(scopes):
                    count += sum(_spans_in(spans) for spans in _values(scope, 'spans'))
    for traces in _values(value, 'data'):
        count += sum(_spans_in(spans) for trace in _objects(traces) for spans in _values(trace, 'spans'))
    if not keys & {'resourceSpans', 'batches', 'data'}:
        count += sum(_spans_in(spans) for spans in _values(value, 'spans'))
    return count


def count_proto_spans(data: bytes) -> int | None:
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except Exception:
        return None
    count = 0
    for resource in request.resource_spans:
        count += sum(len(scope.spans) for scope in resource.scope_spans)
        for field in unknown_fields.UnknownFieldSet(resource):
            if field.field_number == 1000 and field.wire_type == 2:
                legacy = ScopeSpans()
                legacy.ParseFromString(field.data)
                count += len(legacy.spans)
    return count


def count_spans(content: bytes) -> int | None:
    """The spans the (decompressed) content holds, or None when it cannot be read at all."""
    if content[:1] == b'\n' or re.match(rb'[\x00-\x08\x0b\x0c\x0e-\x1f]', content[:1]):
        return count_proto_spans(content)
    try:
        return count_json_spans(parse(content))
    except (ValueError, RecursionError):
        pass
    total = 0
    for line in content.splitlines():
        if line.strip():
            try:
                total += count_json_spans(parse(line))
            except (ValueError, RecursionError):
                return None
    return total


def decompressed(data: bytes) -> bytes | None:
    if data[:2] != b'\x1f\x8b':
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, ValueError):
        return None


def warned_spans(warnings: list[str]) -> int:
    """Spans the warnings say were not loaded: duplicates (one each) and spans counted in words."""
    count = 0
    for warning in warnings:
        if 'duplicate span id' in warning:
            count += 1
        count += sum(int(number) for number in re.findall(r'(\d+) span\(s\)', warning))
    return count


# ------------------------------------------------------------------------------------------
# Mutations
# ------------------------------------------------------------------------------------------

Mutation = Callable[[random.Random, Any], str]
"""Changes a parsed JSON value in place; returns what it did."""


def _nodes(value: Any) -> list[tuple[Any, int]]:
    """(container, index) of every value below `value` (an `Obj`'s index points at a pair)."""
    found = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            for index, child in enumerate(item):
                found.append((item, index))
                stack.append(child[1] if isinstance(item, Obj) else child)
    return found


def _get(container: Any, index: int) -> Any:
    return container[index][1] if isinstance(container, Obj) else container[index]


def _set(container: Any, index: int, value: Any) -> None:
    if isinstance(container, Obj):
        container[index] = (container[index][0], value)
    else:
        container[index] = value


def _spans(value: Any) -> list[Obj]:
    """Every object with a span id key (spans, links, references)."""
    found = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Obj):
            if any(key in ('spanId', 'spanID') for key, _ in item):
                found.append(item)
            stack.extend(child for _, child in item)
        elif isinstance(item, list):
            stack.extend(item)
    return found


WRONG_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    'text',
    '',
    [],
    [1, 'two'],
    Obj(),
    Obj([('x', 1)]),
    Raw('Infinity'),
    Raw('-Infinity'),
    Raw('NaN'),
    Raw('1e400'),
    Raw('9' * 5000),
    Raw(str(2**64)),
    Raw('"\\ud800"'),
]


def wrong_type(rng: random.Random, value: Any) -> str:
    nodes = _nodes(value)
    container, index = rng.choice(nodes)
    new = rng.choice(WRONG_VALUES)
    _set(container, index, new)
    return f'value {index} set to {dump(new, None)[:20]}'


def span_field(rng: random.Random, value: Any) -> str:
    """A wrong value in one field of one span (where the decoders look hardest)."""
    spans = _spans(value)
    if not spans:
        return wrong_type(rng, value)
    span = rng.choice(spans)
    index = rng.randrange(len(span))
    new = rng.choice(WRONG_VALUES)
    span[index] = (span[index][0], new)
    return f'span field {span[index][0]} set to {dump(new, None)[:20]}'


def _objects_in(value: Any) -> list[Obj]:
    objects = [_get(c, i) for c, i in _nodes(value) if isinstance(_get(c, i), Obj) and _get(c, i)]
    return objects + ([value] if isinstance(value, Obj) and value else [])


def delete_key(rng: random.Random, value: Any) -> str:
    objects = _objects_in(value)
    if not objects:
        return 'nothing to delete'
    obj = rng.choice(objects)
    key, _ = obj.pop(rng.randrange(len(obj)))
    return f'deleted key {key}'


def rename_key(rng: random.Random, value: Any) -> str:
    objects = _objects_in(value)
    if not objects:
        return 'nothing to rename'
    obj = rng.choice(objects)
    index = rng.randrange(len(obj))
    key, item = obj[index]
    new = rng.choice([key[:-1], key + 's', key.lower(), key.upper(), key + '_'])
    obj[index] = (new, item)
    return f'renamed key {key} to {new}'


def repeat_key(rng: random.Random, value: Any) -> str:
    objects = _objects_in(value)
    if not objects:
        return 'nothing to repeat'
    obj = rng.choice(objects)
    index = rng.randrange(len(obj))
    key, item = obj[index]
    obj.insert(rng.randrange(len(obj) + 1), (key, rng.choice([item, [], None])))
    return f'repeated key {key}'


def deep(rng: random.Random, value: Any) -> str:
    depth = rng.choice([50, 200, 990, 1500, 5000, 100_000])
    shape = rng.choice(['[]', '{}', 'attr'])
    if shape == '[]':
        text = '[' * depth + ']' * depth
    elif shape == '{}':
        text = '{"a":' * depth + '1' + '}' * depth
    else:
        text = '{"arrayValue":{"values":[' * depth + '{"intValue":"1"}' + ']}}' * depth
    nodes = _nodes(value)
    container, index = rng.choice(nodes)
    _set(container, index, Raw(text))
    return f'nested {shape} {depth} deep'


def _ids(span: Obj) -> tuple[str | None, str | None]:
    keys = dict(span)
    return (
        next((keys[k] for k in ('spanId', 'spanID') if k in keys), None),
        next((k for k in ('parentSpanId', 'parentSpanID') if k in keys), None),
    )


def cycle(rng: random.Random, value: Any) -> str:
    spans = [span for span in _spans(value) if any(key in ('traceId', 'traceID') for key, _ in span)]
    if len(spans) < 2:
        return 'no spans for a cycle'
    chosen = rng.sample(spans, rng.choice([1, 2, 3]) if len(spans) >= 3 else 1)
    ids = [_ids(span)[0] for span in chosen]
    for position, span in enumerate(chosen):
        parent = ids[(position + 1) % len(ids)]
        field = 'parentSpanID' if any(key == 'spanID' for key, _ in span) else 'parentSpanId'
        for index, (key, _) in enumerate(span):
            if key in ('references',):
                span[index] = (key, [])
        span[:] = Obj([pair for pair in span if pair[0] != field] + [(field, parent)])
    return f'parent cycle of {len(chosen)}'


def many_roots(rng: random.Random, value: Any) -> str:
    for span in _spans(value):
        span[:] = Obj([(key, item) for key, item in span if key not in ('parentSpanId', 'parentSpanID', 'references')])
        if rng.random() < 0.5:
            span.append(('parentSpanId', 'ffffffffffffffff'))
    return 'every span a root or an orphan'


def duplicate_span(rng: random.Random, value: Any) -> str:
    lists = [_get(c, i) for c, i in _nodes(value) if isinstance(_get(c, i), list) and not isinstance(_get(c, i), Obj)]
    lists = [items for items in lists if any(isinstance(item, Obj) and ('spanId', 'spanID') for item in items)]
    if not lists:
        return 'nothing to duplicate'
    items = rng.choice(lists)
    if items:
        items.insert(rng.randrange(len(items) + 1), rng.choice(items))
    return 'duplicated a list item'


def attribute_type(rng: random.Random, value: Any) -> str:
    """An attribute (OTLP value or Jaeger tag) of another, valid type than the one recorded: what extraction meets."""
    values = [
        obj
        for obj in _objects_in(value)
        if len(obj) == 1 and obj[0][0] in ('stringValue', 'intValue', 'boolValue', 'doubleValue')
    ]
    tags = [obj for obj in _objects_in(value) if {'key', 'type', 'value'} <= {key for key, _ in obj}]
    if values and (not tags or rng.random() < 0.5):
        obj = rng.choice(values)
        new = rng.choice(
            [
                ('intValue', str(rng.choice([0, -1, 2**63 - 1]))),
                ('doubleValue', rng.choice([1.5, Raw('"NaN"'), Raw('"Infinity"')])),
                ('boolValue', True),
                ('arrayValue', Obj([('values', [Obj([('stringValue', 'a')]), Obj([('intValue', '1')])])])),
                ('kvlistValue', Obj([('values', [Obj([('key', 'k'), ('value', Obj([('stringValue', 'v')]))])])])),
                ('bytesValue', 'AAEC'),
                ('stringValue', rng.choice(['', '[/x]', '{"a":', '\u001b[2J', '[' * 3000 + ']' * 3000])),
            ]
        )
        obj[:] = Obj([new])
        return f'attribute value now {new[0]}'
    if tags:
        tag = rng.choice(tags)
        kind = rng.choice([('int64', 5), ('float64', 1.5), ('bool', True), ('string', ''), ('binary', 'AAEC')])
        tag[:] = Obj(
            [(key, item) for key, item in tag if key not in ('type', 'value')] + [('type', kind[0]), ('value', kind[1])]
        )
        return f'tag now {kind[0]}'
    return 'no attribute'


def many_spans(rng: random.Random, value: Any) -> str:
    """One span copied thousands of times with new ids: a long parent chain, or as many roots."""
    lists = [
        _get(c, i)
        for c, i in _nodes(value)
        if isinstance(_get(c, i), list)
        and not isinstance(_get(c, i), Obj)
        and _get(c, i)
        and all(isinstance(item, Obj) and {'spanId', 'spanID'} & {k for k, _ in item} for item in _get(c, i))
    ]
    if not lists:
        return 'no spans'
    spans = rng.choice(lists)
    template = spans[0]
    id_key = 'spanId' if any(key == 'spanId' for key, _ in template) else 'spanID'
    parent_key = 'parentSpanId' if id_key == 'spanId' else 'parentSpanID'
    count = rng.choice([500, 3000])
    chain = rng.random() < 0.5
    for number in range(1, count + 1):
        copy = Obj([(k, v) for k, v in template if k not in (id_key, parent_key, 'references')])
        copy.append((id_key, f'{0xABC0000000000000 + number:016x}'))
        if chain and number > 1:
            copy.append((parent_key, f'{0xABC0000000000000 + number - 1:016x}'))
        spans.append(copy)
    return f'{count} copies of a span ({"a chain" if chain else "roots"})'


CONTAINER_KEYS = frozenset({'resourceSpans', 'batches', 'scopeSpans', 'instrumentationLibrarySpans', 'spans', 'data'})


def container_key(rng: random.Random, value: Any) -> str:
    """A key that holds spans renamed, repeated, or a scope list split under both of its names."""
    found = [
        (obj, index)
        for obj in _objects_in(value)
        for index, (key, _) in enumerate(obj)
        if key in CONTAINER_KEYS and isinstance(obj, Obj)
    ]
    if not found:
        return 'no container key'
    obj, index = rng.choice(found)
    key, item = obj[index]
    choice = rng.randrange(3)
    if choice == 0:
        obj[index] = (key[:-1], item)
        return f'renamed {key} to {key[:-1]}'
    if choice == 1:
        obj.insert(index + 1, (key, rng.choice([[], item[:1] if isinstance(item, list) else item])))
        return f'repeated {key}'
    other = 'instrumentationLibrarySpans' if key == 'scopeSpans' else 'scopeSpans'
    obj.append((other, item))
    return f'{key} also under {other}'


JSON_MUTATIONS: list[Mutation] = [
    container_key,
    attribute_type,
    attribute_type,
    many_spans,
    wrong_type,
    span_field,
    span_field,
    delete_key,
    rename_key,
    repeat_key,
    deep,
    cycle,
    many_roots,
    duplicate_span,
]


def mutate_json(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """One to three mutations of one line (JSON lines) or of the document."""
    lines = [line for line in content.split(b'\n') if line.strip()]
    one_per_line = all(line.lstrip()[:1] in (b'{', b'[') and line.rstrip()[-1:] in (b'}', b']') for line in lines)
    values = [parse(line) for line in lines] if len(lines) > 1 and one_per_line else [parse(content)]
    index = rng.randrange(len(values))
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        mutation = rng.choice(JSON_MUTATIONS)
        done.append(f'{mutation.__name__}: {mutation(rng, values[index])}')
    where = f'line {index + 1}: ' if len(values) > 1 else ''
    text = '\n'.join(dump(value, None) for value in values) + '\n' if len(values) > 1 else dump(values[0], 1)
    return text.encode(), where + '; '.join(done)


def mutate_proto(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(content)
    spans = [span for resource in request.resource_spans for scope in resource.scope_spans for span in scope.spans]
    span = rng.choice(spans)
    choice = rng.randrange(8)
    if choice == 0:
        span.parent_span_id = span.span_id
        what = 'a span its own parent'
    elif choice == 1:
        other = rng.choice(spans)
        span.parent_span_id, other.parent_span_id = other.span_id, span.span_id
        what = 'a parent cycle'
    elif choice == 2:
        span.trace_id = rng.choice([b'', b'\x00' * 16, b'\x01' * 15, b'\x01' * 17])
        what = 'a bad trace id'
    elif choice == 3:
        span.span_id = rng.choice([b'', b'\x00' * 8, b'\x01' * 7])
        what = 'a bad span id'
    elif choice == 4:
        span.start_time_unix_nano = span.end_time_unix_nano = 2**64 - 1
        what = 'the largest timestamps'
    elif choice == 5:
        value = span.attributes.add(key='deep').value
        for _ in range(rng.choice([50, 99, 150])):
            value = value.array_value.values.add()
        value.int_value = 1
        what = 'deeply nested attribute'
    elif choice == 6:
        request.resource_spans[0].scope_spans[0].spans.add().CopyFrom(span)
        what = 'a duplicated span'
    else:
        for each in spans:
            each.parent_span_id = b''
        what = 'every span a root'
    return request.SerializeToString(), what


def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    choice = rng.randrange(4)
    if choice == 0 or len(data) < 4:
        cut = rng.randrange(len(data) + 1)
        return data[:cut], f'truncated at byte {cut}'
    if choice == 1:
        flipped = bytearray(data)
        positions = [rng.randrange(len(data)) for _ in range(rng.choice([1, 2, 8]))]
        for position in positions:
            flipped[position] ^= 1 << rng.randrange(8)
        return bytes(flipped), f'flipped bits at {positions}'
    start = rng.randrange(len(data))
    end = min(len(data), start + rng.randrange(1, 200))
    if choice == 2:
        return data[:start] + data[end:], f'deleted bytes {start}..{end}'
    return data[:end] + data[start:end] + data[end:], f'repeated bytes {start}..{end}'


def mutate(rng: random.Random, path: Path) -> tuple[bytes, str]:
    data = path.read_bytes()
    gzipped = path.suffix == '.gz'
    content = gzip.decompress(data) if gzipped else data
    if gzipped and rng.random() < 0.3:
        mutated, what = mutate_bytes(rng, data)
        return mutated, f'gzip bytes: {what}'
    if rng.random() < 0.35:
        mutated, what = mutate_bytes(rng, content)
    elif path.name.endswith('.pb') or path.name.endswith('.pb.gz'):
        mutated, what = mutate_proto(rng, content)
    else:
        mutated, what = mutate_json(rng, content)
    return (gzip.compress(mutated, mtime=0) if gzipped else mutated), what


# ------------------------------------------------------------------------------------------
# The check
# ------------------------------------------------------------------------------------------


def _extract(traces: list[LoadedTrace], sources: list[Path]) -> str | None:
    """Extraction on every tree, and `inspect` (tree and `--json`) on the sources: no exception, no internal error."""
    import contextlib
    import io

    from agentic_evals import extract_trajectory
    from agentic_evals.cli import main

    for trace in traces:
        extract_trajectory(trace.tree)
    for flags in ([], ['--json']):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(['inspect', *flags, *map(str, sources)])
        if status not in (0, 2):
            return f'inspect {" ".join(flags)} exited {status}: {err.getvalue()[-300:]!r}'
    return None


def peak_memory(path: Path, data: bytes, beside: Path | None) -> str | None:
    """Whether loading `path` stays within its memory bound (gzip bombs included), or what it took."""
    import tracemalloc

    size = len(decompressed(data) or data) + (len(beside.read_bytes()) if beside else 0)
    bound = MEMORY_FLOOR + BYTES_PER_INPUT_BYTE * size
    tracemalloc.start()
    try:
        read_traces(*([beside] if beside else []), path, on_warning=lambda _: None)
    except FileError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return None if peak <= bound else f'peak memory {peak / 2**20:.0f} MiB for {size:,} bytes of input'


def check(path: Path, data: bytes, *, by_directory: bool = False, beside: Path | None = None) -> str | None:
    """Load `path` (holding `data`), or the directory holding only it; what broke a promise, or None.

    Through a directory, a file that is no trace format may be skipped with a warning instead.
    `beside` is a good file loaded first, so spans of the same traces merge across the two.
    """
    warnings: list[str] = []
    started = time.process_time()  # CPU time: a busy machine does not fail the check
    sources = ([beside] if beside else []) + [path.parent if by_directory else path]
    try:
        traces = read_traces(*sources, on_warning=warnings.append)
    except FileError as error:
        elapsed = time.process_time() - started
        message = str(error)
        if '\n' in message or '\r' in message:
            return f'a message of several lines: {message!r}'
        if not message.startswith(str(path)) and not (by_directory and message.startswith(str(path.parent))):
            return f'the message does not name the file: {message!r}'
        if error.line is None and error.offset is None and not error.message.startswith('empty file'):
            return f'no line or offset: {message!r}'
        if 'malformed' in message or 'Error:' in message:
            return f'an unexplained error: {message!r}'
        if elapsed > SECONDS_PER_LOAD:
            return f'took {elapsed:.1f} s to fail'
        return None
    except Exception as error:  # the promise under test: nothing else, ever
        return f'raised {type(error).__name__}: {error!s:.300}'
    elapsed = time.process_time() - started
    if elapsed > SECONDS_PER_LOAD:
        return f'took {elapsed:.1f} s'
    if any('skipped, not a trace file' in warning for warning in warnings):
        read = any(path in trace.sources for trace in traces)
        return None if by_directory and not read else f'skipped a file it read, or named: {warnings}'
    content = decompressed(data)
    expected = count_spans(content) if content is not None else None
    if beside is not None and expected is not None:
        good = count_spans(decompressed(beside.read_bytes()) or b'')
        expected = None if good is None else expected + good
    loaded = sum(len(trace.tree.nodes_by_id) for trace in traces)
    said = warned_spans(warnings + [warning for trace in traces for warning in trace.warnings])
    if expected is not None and expected > loaded + said:
        return f'{expected - loaded - said} of {expected} spans lost without a warning ({loaded} loaded)'
    if EXTRACT:
        try:
            return _extract(traces, sources)
        except Exception as error:
            return f'extraction raised {type(error).__name__}: {error!s:.300}'
    return None


def cases() -> Iterator[int]:
    if ONE_CASE is not None:
        yield int(ONE_CASE)
    else:
        yield from range(CASES)


def test_mutated_trace_files_load_or_fail_cleanly(tmp_path: Path) -> None:
    failures = []
    for case in cases():
        rng = random.Random(SEED * 1_000_003 + case)
        fixture = rng.choice(FIXTURES)
        data, what = mutate(rng, fixture)
        by_directory = rng.random() < 0.2
        beside = fixture if rng.random() < 0.1 else None
        path = tmp_path / f'case{case}' / fixture.name
        path.parent.mkdir()
        path.write_bytes(data)
        problem = check(path, data, by_directory=by_directory, beside=beside)
        if problem is None and case % MEMORY_EVERY == 0:
            problem = peak_memory(path, data, beside)
        if problem is not None:
            via = ', through its directory' if by_directory else ''
            via += ', beside the original' if beside else ''
            failures.append(f'case {case} ({fixture.name}{via}, {what}): {problem}')
        path.unlink()
        path.parent.rmdir()
    assert failures == [], f'{len(failures)} failures; replay one with AGENTIC_EVALS_FUZZ_CASE=N:\n' + '\n'.join(
        failures[:20]
    )
