"""Content some frameworks keep in span events is copied onto the span by every reader.

`SpanNode` has no events: the readers fold the events the families name (`Family.events`, and the
exception event) into the span's attributes, never over a key the span has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentic_evals import read_traces

from . import request, span, write_lines
from .test_formats import DATA, to_protobuf

STRANDS = Path(__file__).resolve().parents[2] / 'fixtures' / 'frameworks' / 'strands' / 'default.otlp.jsonl'


def event(name: Any, **attributes: str) -> dict[str, Any]:
    return {
        'timeUnixNano': '1',
        'name': name,
        'attributes': [{'key': k, 'value': {'stringValue': v}} for k, v in attributes.items()],
    }


def tool_attributes(path: Path) -> list[dict[str, Any]]:
    (trace,) = read_traces(path)
    return [node.attributes for node in trace.tree if node.name.startswith('execute_tool ')]


def test_strands_events_read_alike_from_json_and_protobuf(tmp_path: Path) -> None:
    binary = tmp_path / 'strands.otlp.pb'
    binary.write_bytes(b''.join(to_protobuf(json.loads(line)) for line in STRANDS.read_text().splitlines()))

    from_json, from_protobuf = tool_attributes(STRANDS), tool_attributes(binary)

    assert from_json == from_protobuf
    weather = from_json[0]
    assert weather['gen_ai.tool.message.content'] == '{"city": "Paris"}'
    assert weather['gen_ai.choice.message'] == '[{"text": "Sunny, 21 C"}]'
    assert from_json[1]['exception.type'] == 'ValueError'


def test_jaeger_logs_are_folded_too(tmp_path: Path) -> None:
    document = json.loads((DATA / 'jaeger_ui.json').read_text())
    tool = document['data'][0]['spans'][1]
    tool['logs'].append(
        {
            'timestamp': 1700000000501000,
            'fields': [
                {'key': 'event', 'type': 'string', 'value': 'gen_ai.tool.message'},
                {'key': 'content', 'type': 'string', 'value': '{"city": "Rome"}'},
            ],
        }
    )
    path = tmp_path / 'jaeger.json'
    path.write_text(json.dumps(document))

    (attributes,) = tool_attributes(path)

    assert attributes['gen_ai.tool.message.content'] == '{"city": "Rome"}'
    assert attributes['exception.type'] == 'ModelRetry'


def test_the_span_and_the_first_event_win_and_odd_events_are_skipped(tmp_path: Path) -> None:
    events = [
        event(['not', 'a', 'name'], content='ignored'),
        event('gen_ai.choice', message='first'),
        event('gen_ai.choice', message='second'),
        event('gen_ai.client.inference.operation.details', **{'gen_ai.output.messages': 'from the event'}),
    ]
    own = [{'key': 'gen_ai.output.messages', 'value': {'stringValue': 'the span own'}}]
    path = write_lines(
        tmp_path / 'events.jsonl',
        request(
            span(
                '1',
                'execute_tool a',
                attributes=[{'key': 'gen_ai.tool.name', 'value': {'stringValue': 'a'}}, *own],
                events=events,
            )
        ),
    )

    ((node,),) = [list(trace.tree) for trace in read_traces(path)]

    assert node.attributes['gen_ai.choice.message'] == 'first'
    assert node.attributes['gen_ai.output.messages'] == 'the span own'
