"""orjson parses trace files, `json` decides: the same traces, warnings and errors as with `json` alone.

Each input below is text where orjson and `json` disagree (orjson refuses it, or reads it as
another value): every one is loaded from a real file twice, once as shipped and once with orjson
turned off, and the outcomes (every span and attribute, with types, every warning, or the error
with its line) must be equal. The first test shows orjson really does the parsing otherwise.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from agentic_evals import FileError, LoadedTrace, read_traces
from agentic_evals.traces import _readers

from . import attribute, request, span

Outcome = tuple[object, ...]


def _trace(trace: LoadedTrace) -> tuple[object, ...]:
    nodes = [
        (
            node.name,
            node.span_id,
            node.parent_span_id,
            node.start_timestamp,
            node.end_timestamp,
            node.status,
            repr(list(node.attributes.items())),  # repr: NaN equals itself, 1 and 1.0 differ
            [child.span_id for child in node.children],
        )
        for node in trace.tree
    ]
    return trace.trace_id, trace.sources, trace.warnings, nodes


def outcome(path: Path) -> Outcome:
    """What loading `path` gives: its traces and warnings, or the error."""
    warnings: list[str] = []
    try:
        traces = read_traces(path, on_warning=warnings.append)
    except FileError as error:
        return 'error', type(error).__name__, str(error), error.line, error.offset, warnings
    return 'traces', [_trace(trace) for trace in traces], warnings


def json_only(path: Path, monkeypatch: pytest.MonkeyPatch) -> Outcome:
    with monkeypatch.context() as patch:
        patch.setattr(_readers, '_orjson_loads', None)
        return outcome(path)


MARK = '"@RAW@"'


def line_with(raw: str, value: dict[str, Any] | None = None, **fields: Any) -> str:
    """A request line whose span has attribute `v` of `value`, with the JSON text `raw` put where `@RAW@` is."""
    encoded = span('1', 'x', attributes=[attribute('v', value or {'stringValue': '@RAW@'})], **fields)
    return json.dumps(request(encoded, span('2', 'y', parent='1', start_us=1))).replace(MARK, raw)


def write(path: Path, *lines: str, gzipped: bool = False) -> Path:
    data = ''.join(line + '\n' for line in lines).encode('utf-8', 'surrogatepass')
    path.write_bytes(gzip.compress(data) if gzipped else data)
    return path


def pretty(text: str) -> str:
    """The request line `text` (valid JSON) pretty-printed over many lines."""
    return json.dumps(json.loads(text), indent=2)


def nested(depth: int) -> str:
    return '[' * depth + ']' * depth


VALUES = {
    'NaN': ('NaN', {'doubleValue': '@RAW@'}),
    'Infinity': ('Infinity', {'doubleValue': '@RAW@'}),
    '-Infinity in an array': ('{"values": [{"doubleValue": -Infinity}]}', {'arrayValue': '@RAW@'}),
    '1e400': ('1e400', {'doubleValue': '@RAW@'}),
    '-1e400 as an int': ('-1e400', {'intValue': '@RAW@'}),
    '2**64': (str(2**64), {'intValue': '@RAW@'}),
    '2**64 - 1': (str(2**64 - 1), {'intValue': '@RAW@'}),
    'below -2**63': (str(-(2**63) - 1), {'intValue': '@RAW@'}),
    '30 digits': ('123456789012345678901234567890', {'intValue': '@RAW@'}),
    '30 digits as a double': ('123456789012345678901234567890', {'doubleValue': '@RAW@'}),
    'big ints in a kvlist': (
        '{"values": [{"key": "n", "value": {"intValue": 123456789012345678901234567890}}]}',
        {'kvlistValue': '@RAW@'},
    ),
    '5000 digits': ('9' * 5000, {'intValue': '@RAW@'}),
    'lone high surrogate': ('"\\ud800"', None),
    'lone low surrogate': ('"\\udc00 tail"', None),
    'surrogate pair': ('"\\ud83d\\ude00"', None),
    'two high surrogates': ('"\\udbff\\udbff"', None),
    'duplicate keys in a value': ('"first", "stringValue": "second"', None),
    'duplicate kinds in a value': ('"text", "intValue": 3', None),
    'nested 100 deep': (nested(100), None),
    'nested 1010 deep': (nested(1010), None),
    'nested 2000 deep': (nested(2000), None),
}


@pytest.mark.parametrize('form', ['jsonl', 'json', 'jsonl.gz'])
@pytest.mark.parametrize('name', list(VALUES))
def test_values_orjson_reads_otherwise_load_as_with_json(
    name: str, form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw, value = VALUES[name]
    text = line_with(MARK, value)  # the mark kept: valid JSON until it is replaced
    if form == 'json':
        path = write(tmp_path / 't.json', pretty(text).replace(MARK, raw))
    else:
        good = json.dumps(request(span('9', 'good', trace_id='1' * 32)))
        path = write(tmp_path / f't.{form}', good, text.replace(MARK, raw), gzipped=form.endswith('gz'))

    assert outcome(path) == json_only(path, monkeypatch)


FIELDS = {
    'a start time of 30 digits': {'startTimeUnixNano': 123456789012345678901234567890},
    'an end time beyond 2**64': {'endTimeUnixNano': 2**64 + 1},
    'a start time as a number': {'startTimeUnixNano': 1_700_000_000_000_000_000},
    'a name of 30 digits': {'name': 123456789012345678901234567890},
    'a big status code on the careful path': {'name': 5, 'status': {'code': 2**70}},
    'a big span id': {'spanId': 2**70},
    'a lone surrogate in the name': {'name': '\ud800'},
    'NaN as the kind': {'kind': float('nan')},
    'a big number in a link': {'links': [{'traceId': 'a' * 32, 'spanId': 'b' * 16, 'flags': 2**70}]},
    'deep nesting in an ignored field': {'kind': json.loads(nested(90))},
}


@pytest.mark.parametrize('form', ['jsonl', 'json'])
@pytest.mark.parametrize('name', list(FIELDS))
def test_span_fields_orjson_reads_otherwise_load_as_with_json(
    name: str, form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Span fields of the numbers and strings above: `json.dumps` writes them as `json` reads them back."""
    first = span('1', 'x')
    first.update(FIELDS[name])
    encoded = request(first, span('2', 'y', parent='1', start_us=1))
    text = json.dumps(
        encoded, indent=2 if form == 'json' else None, ensure_ascii=name != 'a lone surrogate in the name'
    )
    path = write(tmp_path / f't.{form}', text)

    assert outcome(path) == json_only(path, monkeypatch)


def test_deep_nesting_json_cannot_read_but_orjson_can_is_the_same_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1010 lists deep, where nothing decodes them: orjson (1024 at most) reads it, `json` runs out of recursion."""
    encoded = request(span('1'))
    encoded['resourceSpans'][0]['resource'] = {'attributes': [], 'extra': '@RAW@'}
    path = write(tmp_path / 't.jsonl', json.dumps(encoded).replace(MARK, nested(1010)))

    fast = outcome(path)

    assert fast == json_only(path, monkeypatch)
    if fast[0] == 'error':  # Python 3.10 and 3.11, at the default recursion limit
        assert fast[2] == f'{path}:1: JSON nested too deeply to read'


BYTES = {
    'invalid UTF-8': b'"bad \xff byte"',
    'an encoded surrogate': b'"\xed\xa0\x80"',
    'an overlong encoding': b'"\xc0\xaf"',
    'beyond U+10FFFF': b'"\xf4\x90\x80\x80"',
}


@pytest.mark.parametrize('name', list(BYTES))
def test_bytes_that_are_not_utf8_load_as_with_json(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = line_with(MARK).encode().replace(MARK.encode(), BYTES[name])
    for path in (tmp_path / 't.jsonl', tmp_path / 't.json'):
        path.write_bytes(line + b'\n')

        assert outcome(path) == json_only(path, monkeypatch)


@pytest.mark.parametrize('suffix', ['jsonl', 'json'])
def test_a_byte_order_mark_loads_as_with_json(suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / f't.{suffix}'
    path.write_bytes(b'\xef\xbb\xbf' + json.dumps(request(span('1')), indent=2 if suffix == 'json' else None).encode())

    result = outcome(path)

    assert result == json_only(path, monkeypatch)
    assert result[0] == 'traces'


def test_a_key_repeated_with_spans_under_it_is_the_same_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hidden = json.dumps(span('2', 'hidden'))
    text = json.dumps(request(span('1', 'first'))).replace('"spans": [', f'"spans": [{hidden}], "spans": [', 1)
    path = write(tmp_path / 't.jsonl', json.dumps(request(span('2', trace_id='2' * 32))), text)

    result = outcome(path)

    assert result == json_only(path, monkeypatch)
    assert (
        result[2]
        == f"{path}:2: the key 'spans' appears twice in one object: the spans under its first value would be lost"
    )


def test_broken_json_is_the_same_error_with_its_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = json.dumps(request(span('1')))
    for number, broken in enumerate([good[:-1], good + ' x', good.replace(':', '', 1), '{"a": 01}', '{"a": 1,}']):
        path = write(tmp_path / f'{number}.jsonl', good, broken)

        result = outcome(path)

        assert result == json_only(path, monkeypatch)
        assert result[0] == 'error'
        assert 'invalid JSON' in str(result[2])


def test_orjson_parses_ordinary_files_and_json_never_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ordinary file, lines and a document: every unit through orjson, its value kept, none from `json`."""
    lines = write(tmp_path / 't.jsonl', *(line_with(f'"v{n}"', start_us=n) for n in range(3)))
    whole = write(tmp_path / 't.json', pretty(line_with('"v"')))
    orjson_calls: list[int] = []
    json_calls: list[int] = []
    fast_loads, slow_loads = _readers._orjson_loads, json.loads
    assert fast_loads is not None

    def counting_fast(data: bytes) -> Any:
        orjson_calls.append(1)
        return fast_loads(data)

    def counting_slow(data: bytes | str, **options: Any) -> Any:
        value = slow_loads(data, **options)
        json_calls.append(1)  # a value `json` gave (detection parses the document's broken first lines too)
        return value

    with monkeypatch.context() as patch:
        patch.setattr(_readers, '_orjson_loads', counting_fast)
        patch.setattr(json, 'loads', counting_slow)
        traces = read_traces(lines) + read_traces(whole)

    assert [trace.tree.first({'name': 'x'}) is not None for trace in traces] == [True, True]
    assert json_calls == []
    assert len(orjson_calls) >= 4  # 3 lines and the document (format detection may parse a line too)


def test_the_check_walks_every_level() -> None:
    """What `_as_json_reads` refuses (so `json` parses again): a float where a big integer may have been, deep nesting."""
    check = _readers._as_json_reads
    deep: list[Any] = []
    for _ in range(_readers.FAST_DEPTH):
        deep = [deep]

    assert check({'a': [{'b': 1.5, 'c': 2**63, 'd': -(2**63)}], 'e': 'text'})
    assert check(deep[0])
    assert not check(deep)
    assert not check(1.8446744073709552e19)
    assert not check({'a': [[{'b': -9.3e18}]]})
    assert not check([{'x': 'y'}, [[[[1.0, 2.0, 2e19]]]]])
