"""Values of the wrong JSON type, too deep or out of range: a located `FileError` or a warning, never a traceback.

The rule (module docstring of `_otlp_json`): what a span cannot be placed without (trace and span
ids, start time) and containers of the wrong type are errors; everything else is recovered from
with a warning on the trace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_evals import FileError, read_traces

from . import attribute, jaeger, jaeger_span, request, span, write_document, write_lines

FORMATS = ['jsonl', 'json', 'jsonl.gz', 'json.gz']


def write(path: Path, document: dict[str, Any]) -> Path:
    """`document` after a good line (JSON lines), or alone as a pretty document."""
    if '.jsonl' in path.name:
        return write_lines(path, request(span('9', 'good')), document)
    return write_document(path, document)


def error_of(path: Path) -> FileError:
    with pytest.raises(FileError) as raised:
        read_traces(path)
    assert '\n' not in str(raised.value)
    return raised.value


def line_of(path: Path, text: str, occurrence: int = 0) -> int:
    """The line of `path` (a pretty document) holding `text`, its n-th occurrence."""
    lines = [number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return lines[occurrence]


@pytest.mark.parametrize('suffix', FORMATS)
@pytest.mark.parametrize(('name', 'text'), [(1.5, '1.5'), (['a'], '["a"]'), ({'a': 1}, '{"a":1}'), (True, 'true')])
def test_a_name_that_is_not_a_string_is_kept_as_text_with_a_warning(
    suffix: str, name: object, text: str, tmp_path: Path
) -> None:
    path = write(tmp_path / f't.{suffix}', request(span('1', name=name)))  # type: ignore[arg-type]

    traces = read_traces(path)

    node = next(node for trace in traces for node in trace.tree if node.span_id == 1)
    assert node.name == text
    [warning] = [warning for trace in traces for warning in trace.warnings]
    kind = {float: 'a number', list: 'a list', dict: 'an object', bool: 'a boolean'}[type(name)]
    assert warning.endswith(
        f'span 0000000000000001 ({text!r}): its name is {kind}, not a string; kept as the text {text!r}'
    )


def test_a_jaeger_operation_name_that_is_not_a_string_is_kept_as_text(tmp_path: Path) -> None:
    path = write_document(tmp_path / 'j.json', jaeger(jaeger_span('1', operationName=7)))

    [trace] = read_traces(path)

    assert [node.name for node in trace.tree] == ['7']
    assert trace.warnings == (
        f"{path}: span 0000000000000001 ('7'): its operationName is a number, not a string; kept as the text '7'",
    )


ODD_ATTRIBUTES = [
    (
        {'key': 'a', 'value': {'stringValue': 1.5}},
        "attribute 'a' has an invalid stringValue (1.5 is not a string); skipped",
    ),
    (
        {'key': 'a', 'value': {'intValue': float('inf')}},
        "attribute 'a' has an invalid intValue (Infinity is not an integer); skipped",
    ),
    (
        {'key': 'a', 'value': {'intValue': '12abc'}},
        "attribute 'a' has an invalid intValue ('12abc' is not an integer); skipped",
    ),
    (
        {'key': 'a', 'value': {'arrayValue': []}},
        "attribute 'a' has an invalid arrayValue (arrayValue is a list, not an object); skipped",
    ),
    ({'key': 'a', 'value': ['stringValue']}, "attribute 'a' has a value that is a list, not an object; skipped"),
    ({'key': 5, 'value': {'stringValue': 'x'}}, 'an attribute key is a number (5), not a string; skipped'),
    (['key', 'a'], 'an attribute is a list, not an object; skipped'),
    ({'key': 'a'}, "attribute 'a' has no value; skipped"),
]


@pytest.mark.parametrize('suffix', FORMATS)
@pytest.mark.parametrize(('odd', 'problem'), ODD_ATTRIBUTES, ids=[str(index) for index in range(len(ODD_ATTRIBUTES))])
def test_an_attribute_of_the_wrong_type_is_skipped_with_a_warning(
    suffix: str, odd: Any, problem: str, tmp_path: Path
) -> None:
    good = attribute('b', {'stringValue': 'kept'})
    path = write(tmp_path / f't.{suffix}', request(span('1', 'x', attributes=[odd, good])))

    [trace] = read_traces(path)

    node = next(node for node in trace.tree if node.span_id == 1)
    assert node.attributes == {'b': 'kept'}
    assert [warning.partition(': ')[2] for warning in trace.warnings] == [f"span 0000000000000001 ('x'): {problem}"]


def test_attributes_that_are_not_a_list_are_skipped(tmp_path: Path) -> None:
    path = write_lines(tmp_path / 't.jsonl', request(span('1', 'x', attributes={'a': 1})))  # type: ignore[arg-type]

    [trace] = read_traces(path)

    assert [node.attributes for node in trace.tree] == [{}]
    assert trace.warnings == (f"{path}:1: span 0000000000000001 ('x'): attributes is an object, not a list; skipped",)


@pytest.mark.parametrize(
    ('field', 'value', 'problem'),
    [
        ('status', ['error'], 'its status is a list, not an object; taken as unset'),
        ('status', {'code': [2]}, 'its status code [2] is not a number or a name; taken as unset'),
        ('events', {'name': 'exception'}, 'its events are an object, not a list; skipped'),
        ('events', ['exception'], 'an event is a string, not an object; skipped'),
    ],
)
def test_an_unusable_status_or_event_is_a_warning(field: str, value: Any, problem: str, tmp_path: Path) -> None:
    path = write_lines(tmp_path / 't.jsonl', request(span('1', 'x', **{field: value})))

    [trace] = read_traces(path)

    assert [node.status for node in trace.tree] == ['unset']
    assert trace.warnings == (f"{path}:1: span 0000000000000001 ('x'): {problem}",)


CONTAINERS = [
    ('resourceSpans', lambda document: document.update(resourceSpans='oops'), 'resourceSpans is a string, not a list'),
    (
        'scopeSpans',
        lambda document: document['resourceSpans'][0].update(scopeSpans=5),
        'scopeSpans is a number, not a list',
    ),
    (
        'spans',
        lambda document: document['resourceSpans'][0]['scopeSpans'][0].update(spans={'a': 1}),
        'spans is an object, not a list',
    ),
    (
        'a span',
        lambda document: document['resourceSpans'][0]['scopeSpans'][0]['spans'].append(['x']),
        'a span is a list, not an object',
    ),
    (
        'a resource',
        lambda document: document['resourceSpans'].append('x'),
        'an entry of resourceSpans is a string, not an object',
    ),
]


@pytest.mark.parametrize('suffix', FORMATS)
@pytest.mark.parametrize(('what', 'change', 'message'), CONTAINERS, ids=[case[0] for case in CONTAINERS])
def test_a_container_of_the_wrong_type_is_a_located_error(
    suffix: str, what: str, change: Any, message: str, tmp_path: Path
) -> None:
    document = request(span('1'))
    change(document)
    path = write(tmp_path / f't.{suffix}', document)

    error = error_of(path)

    assert error.message == message
    if '.jsonl' in suffix:
        assert error.line == 2
    else:
        assert error.line is not None and error.line > 1  # where the bad value starts


def test_a_container_error_in_a_document_is_on_the_bad_value_line(tmp_path: Path) -> None:
    document = request(span('1'))
    document['resourceSpans'][0]['scopeSpans'][0]['spans'] = 'oops'
    path = write_document(tmp_path / 't.json', document)

    assert error_of(path).line == line_of(path, '"spans": "oops"')


@pytest.mark.parametrize('suffix', ['jsonl', 'json', 'json.gz'])
@pytest.mark.parametrize('depth', [2_000, 100_000])
def test_json_nested_deeper_than_the_parser_goes_is_a_located_error(suffix: str, depth: int, tmp_path: Path) -> None:
    deep = '[' * depth + ']' * depth
    if suffix == 'jsonl':
        path = write_lines(tmp_path / 't.jsonl', request(span('1')), deep)
        expected = 2
    else:
        text = json.dumps(request(span('1')), indent=2).replace('"attributes": []', f'"attributes": {deep}')
        path = write_document(tmp_path / f't.{suffix}', json.loads('{}'))
        path.write_bytes(__import__('gzip').compress(text.encode()) if suffix.endswith('gz') else text.encode())
        expected = next(number for number, line in enumerate(text.splitlines(), 1) if '[[[' in line)

    error = error_of(path)

    assert (error.line, error.message) == (expected, 'JSON nested too deeply to read')


def test_a_deeply_nested_attribute_is_read_or_skipped_never_raised(tmp_path: Path) -> None:
    value: dict[str, Any] = {'intValue': '1'}
    for _ in range(300):  # about 900 levels of JSON: the parser takes it, the decoder may not
        value = {'arrayValue': {'values': [value]}}
    path = write_lines(tmp_path / 't.jsonl', request(span('1', 'x', attributes=[attribute('deep', value)])))

    [trace] = read_traces(path)

    [node] = trace.tree
    if 'deep' in node.attributes:
        assert str(node.attributes['deep']).startswith('[[[')
    else:
        assert trace.warnings == (
            f"{path}:1: span 0000000000000001 ('x'): attribute 'deep' is nested too deeply to read; skipped",
        )


TIMESTAMPS = [
    ('Infinity', 'startTimeUnixNano Infinity is not a whole number of nanoseconds'),
    ('-Infinity', 'startTimeUnixNano -Infinity is not a whole number of nanoseconds'),
    ('NaN', 'startTimeUnixNano NaN is not a whole number of nanoseconds'),
    ('1e400', 'startTimeUnixNano Infinity is not a whole number of nanoseconds'),
    ('1.5', 'startTimeUnixNano 1.5 is not a whole number of nanoseconds'),
    ('true', 'startTimeUnixNano true is not a whole number of nanoseconds'),
    ('[1]', 'startTimeUnixNano [1] is not a whole number of nanoseconds'),
    ('"soon"', "startTimeUnixNano 'soon' is not a whole number of nanoseconds"),
    ('"Infinity"', "startTimeUnixNano 'Infinity' is not a whole number of nanoseconds"),
    (f'"{2**70}"', f"startTimeUnixNano '{2**70}' is out of range (nanoseconds since 1970, before the year 10000)"),
    (
        f'"{"9" * 5000}"',
        f"startTimeUnixNano '{'9' * 56}... is out of range (nanoseconds since 1970, before the year 10000)",
    ),
    ('9' * 5000, 'invalid JSON: a number with more digits than can be read (4300)'),
]


@pytest.mark.parametrize('suffix', FORMATS)
@pytest.mark.parametrize(('raw', 'message'), TIMESTAMPS, ids=[raw[:12] for raw, _ in TIMESTAMPS])
def test_a_start_time_that_is_no_timestamp_is_an_error_naming_the_field(
    suffix: str, raw: str, message: str, tmp_path: Path
) -> None:
    marker = '"START-HERE"'
    text = json.dumps(request(span('1', startTimeUnixNano='START-HERE')), indent=None if 'jsonl' in suffix else 2)
    text = text.replace(marker, raw)
    if 'jsonl' in suffix:
        text = json.dumps(request(span('9'))) + '\n' + text + '\n'
    path = tmp_path / f't.{suffix}'
    path.write_bytes(__import__('gzip').compress(text.encode()) if suffix.endswith('gz') else text.encode())

    error = error_of(path)

    assert error.message == message
    expected = (
        2
        if 'jsonl' in suffix
        else next(n for n, line in enumerate(text.splitlines(), 1) if '"startTimeUnixNano"' in line)
    )
    if 'digits' not in message and 'jsonl' not in suffix:
        expected = next(n for n, line in enumerate(text.splitlines(), 1) if '"traceId"' in line) - 1  # the span's '{'
    assert error.line == expected


@pytest.mark.parametrize('raw', ['Infinity', 'NaN', '"later"', f'"{2**70}"', '[1]'])
def test_an_unusable_end_time_is_the_start_with_a_warning(raw: str, tmp_path: Path) -> None:
    text = json.dumps(request(span('1', 'x', endTimeUnixNano='END'))).replace('"END"', raw)
    path = tmp_path / 't.jsonl'
    path.write_text(text + '\n')

    [trace] = read_traces(path)

    [node] = trace.tree
    assert node.end_timestamp == node.start_timestamp
    [warning] = trace.warnings
    assert warning.startswith(f"{path}:1: span 0000000000000001 ('x'): endTimeUnixNano ")
    assert warning.endswith('; its end is taken as its start')


@pytest.mark.parametrize(
    ('fields', 'message'),
    [
        ({'startTime': float('inf')}, 'startTime Infinity is not a whole number of microseconds'),
        ({'startTime': 10**30}, f'startTime {10**30} is out of range (microseconds since 1970, before the year 10000)'),
        ({'startTime': 'soon'}, "startTime 'soon' is not a whole number of microseconds"),
        ({'spanID': 12}, 'spanID 12 is not up to 16 hex digits'),
        ({'references': 'x'}, 'references is a string, not a list'),
        ({'references': [5]}, 'a reference is a number, not an object'),
    ],
)
def test_jaeger_values_that_cannot_be_used_are_errors_naming_the_field(
    fields: dict[str, Any], message: str, tmp_path: Path
) -> None:
    path = write_document(tmp_path / 'j.json', jaeger(jaeger_span('1'), jaeger_span('2', **fields)))

    error = error_of(path)

    assert error.message == message
    second_span = line_of(path, '"spanID": "0000000000000001"') + 7  # its '{'
    if message.startswith('references'):
        assert error.line == line_of(path, '"references": "x"')
    elif message.startswith('a reference'):
        assert error.line == line_of(path, '"references"', 1) + 1  # the element
    else:
        assert error.line == second_span


@pytest.mark.parametrize(
    ('fields', 'problem'),
    [
        (
            {'duration': float('inf')},
            'duration Infinity is not a whole number of microseconds; its end is taken as its start',
        ),
        ({'duration': 10**18}, f'duration {10**18} is out of range; its end is taken as its start'),
        (
            {'tags': [{'key': 'n', 'type': 'int64', 'value': float('inf')}]},
            "tag 'n' has an invalid int64 value (Infinity is not an integer); skipped",
        ),
        ({'tags': [['n']]}, 'a tag is a list, not an object; skipped'),
        ({'tags': 'x'}, 'its tags are a string, not a list; skipped'),
        ({'logs': [5]}, 'a log is a number, not an object; skipped'),
    ],
)
def test_jaeger_values_a_span_survives_are_warnings(fields: dict[str, Any], problem: str, tmp_path: Path) -> None:
    path = write_document(tmp_path / 'j.json', jaeger(jaeger_span('1', 'x', **fields)))

    [trace] = read_traces(path)

    assert trace.warnings == (f"{path}: span 0000000000000001 ('x'): {problem}",)


@pytest.mark.parametrize(
    ('field', 'value', 'message'),
    [
        ('traceId', 5, 'traceId 5 is not 32 hex digits'),
        (
            'traceId',
            ['0af7651916cd43dd8448eb211c80319c'],
            'traceId ["0af7651916cd43dd8448eb211c80319c"] is not 32 hex digits',
        ),
        ('spanId', {'id': 1}, 'spanId {"id": 1} is not 16 hex digits'),
        ('parentSpanId', 7, 'parentSpanId 7 is not 16 hex digits'),
        ('spanId', 'AAAAAAAAAAE==', "spanId 'AAAAAAAAAAE==' is not 16 hex digits"),
    ],
)
def test_ids_of_the_wrong_type_or_encoding_are_errors(field: str, value: Any, message: str, tmp_path: Path) -> None:
    path = write_lines(tmp_path / 't.jsonl', request(span('1')), request(span('2', **{field: value})))

    error = error_of(path)

    assert (error.line, error.message) == (2, message)


def test_base64_ids_as_the_protobuf_json_mapping_writes_them_are_read(tmp_path: Path) -> None:
    """`json_format.MessageToDict` and Grafana Tempo spell ids in base64; hex ones have other lengths."""
    path = write_lines(
        tmp_path / 't.jsonl',
        request(
            span('1', traceId='Cvdl GRbNQ92ESOshHIAxnA=='.replace(' ', ''), spanId='AAAAAAAAAAE='),
            span('2', traceId='0af7651916cd43dd8448eb211c80319c', parentSpanId='AAAAAAAAAAE='),
        ),
    )

    [trace] = read_traces(path)

    assert trace.trace_id == '0af7651916cd43dd8448eb211c80319c'
    assert [(node.span_id, node.parent_span_id) for node in trace.tree] == [(1, None), (2, 1)]
    assert trace.warnings == ()


@pytest.mark.parametrize('suffix', ['jsonl', 'json'])
def test_nesting_the_parser_took_but_the_decoder_cannot_is_a_located_error(
    suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lists in lists just under the parser's limit: decoding them recurses a few frames deeper."""
    from agentic_evals.traces import _readers

    def too_deep(*_: object) -> int:
        raise RecursionError

    monkeypatch.setattr(_readers, 'decode_json', too_deep)
    path = write(tmp_path / f't.{suffix}', request(span('1')))

    error = error_of(path)

    assert error.message == 'JSON nested too deeply to read'
    assert error.line == (1 if suffix == 'jsonl' else line_of(path, '"attributes": []'))
