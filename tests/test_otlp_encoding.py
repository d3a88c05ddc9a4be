"""The one OTLP/JSON attribute encoder: every value the trace writer and the evaluation events write."""

from __future__ import annotations

import json
import math

import pytest
from google.protobuf import json_format
from opentelemetry.proto.common.v1 import common_pb2

from agentic_evals import otlp_encoding
from agentic_evals.otlp_encoding import any_value, double, json_line, key_values
from agentic_evals.traces import _writer
from agentic_evals.views import otlp_export


@pytest.mark.parametrize(
    ('value', 'encoded'),
    [
        (None, {}),
        ('text', {'stringValue': 'text'}),
        ('', {'stringValue': ''}),
        (True, {'boolValue': True}),
        (False, {'boolValue': False}),
        (0, {'intValue': '0'}),
        (-(2**63), {'intValue': str(-(2**63))}),
        (1.5, {'doubleValue': 1.5}),
        (math.nan, {'doubleValue': 'NaN'}),
        (math.inf, {'doubleValue': 'Infinity'}),
        (-math.inf, {'doubleValue': '-Infinity'}),
        (b'\x00\xff', {'bytesValue': 'AP8='}),
        (bytearray(b'ab'), {'bytesValue': 'YWI='}),
        (['a', 1, None], {'arrayValue': {'values': [{'stringValue': 'a'}, {'intValue': '1'}, {}]}}),
        ((True, 2.0), {'arrayValue': {'values': [{'boolValue': True}, {'doubleValue': 2.0}]}}),
        (
            {'k': {'n': [1]}},
            {
                'kvlistValue': {
                    'values': [
                        {
                            'key': 'k',
                            'value': {
                                'kvlistValue': {
                                    'values': [{'key': 'n', 'value': {'arrayValue': {'values': [{'intValue': '1'}]}}}]
                                }
                            },
                        }
                    ]
                }
            },
        ),
        (object, {'stringValue': str(object)}),
    ],
    ids=repr,
)
def test_every_value_is_an_otlp_any_value(value: object, encoded: dict[str, object]) -> None:
    assert any_value(value) == encoded
    # and an OTLP reader takes it: protobuf's own JSON parser reads it back as an AnyValue
    json_format.ParseDict(encoded, common_pb2.AnyValue())


def test_key_values_keep_order_and_take_none() -> None:
    assert key_values({'b': 1, 'a': None}) == [{'key': 'b', 'value': {'intValue': '1'}}, {'key': 'a', 'value': {}}]
    assert key_values(None) == key_values({}) == []


def test_doubles() -> None:
    assert [double(v) for v in (0.25, math.nan, math.inf, -math.inf)] == [0.25, 'NaN', 'Infinity', '-Infinity']


def test_a_json_line_escapes_only_what_utf8_cannot_carry() -> None:
    assert json_line({'a': 'é'}) == '{"a":"é"}\n'
    line = json_line({'a': 'x\ud800'})
    assert line == '{"a":"x\\ud800"}\n'
    assert json.loads(line) == {'a': 'x\ud800'}


def test_the_writer_and_the_events_share_the_encoder() -> None:
    assert vars(_writer)['key_values'] is otlp_encoding.key_values
    assert vars(_writer)['json_line'] is otlp_encoding.json_line
    assert vars(otlp_export)['key_values'] is otlp_encoding.key_values
    assert vars(otlp_export)['json_line'] is otlp_encoding.json_line
