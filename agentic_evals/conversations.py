"""A `Trajectory` from a conversation instead of spans, so every deterministic evaluator can score chat logs.

Three formats, detected from the messages themselves (nothing is imported from pydantic-ai, openai or
ragas, so objects and their JSON dumps both work):

- pydantic-ai message history (`result.all_messages()`, or `ModelMessagesTypeAdapter.dump_python(...,
  mode='json')`): messages with `kind` `'request'` / `'response'` and `parts`.
- OpenAI chat completions: messages with a `role`; assistant `tool_calls` are answered by `tool` messages
  with the same `tool_call_id`.
- ragas (and LangChain) messages: `type` `'human'` / `'ai'` / `'tool'`; AI messages carry
  `tool_calls` of `{"name", "args"}`.

The status rules, and how they compare with spans of the same run, are in `docs/conversations.md`.
"""

from __future__ import annotations

import reprlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import pairwise
from typing import Any, Literal

import pydantic_core

from .conventions import genai, pydantic_ai
from .conventions.arguments import TOO_DEEP, load_json, parse_arguments, too_deep
from .trajectory.records import AgentRun, CallStatus, FailureStage, ModelRequest, ToolCall
from .trajectory.trajectory import Trajectory

ConversationFormat = Literal['pydantic-ai', 'openai', 'ragas']

# pydantic-ai's fixed replies to output-tool calls (`_tool_execution.py`, 2.4 to 2.62): they mark the tool
# as an output tool. The two "already processed" replies also mean the call never ran.
_OUTPUT_TOOL_REPLIES = ('Final result processed.', 'Output tool not used - ', 'Output tool processed, but ')
_NOT_EXECUTED_REPLIES = (
    'Tool not executed - a final result was already processed.',
    'Output tool not used - a final result was already processed.',
)
# 2.4 retries an unknown tool name with this prompt; 2.62 records the cause `unknown_tool` instead.
_UNKNOWN_TOOL_PROMPT = 'Unknown tool name: '
_VALIDATION_CAUSES = ('validation_error', 'unknown_tool', 'unavailable_tool')
# Messages without timestamps get these, one millisecond per message: they keep the order, nothing more.
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def trajectory_from_messages(
    messages: Sequence[Any] | str | bytes, *, agent: str | None = 'main', output_tools: Collection[str] = ()
) -> Trajectory:
    """The trajectory of a conversation in any of the three formats (also as JSON text).

    Message histories do not record sub-agents, so every call and model request belongs to `agent`.
    `output_tools` names tools that produce the run's output (never counted as tool calls); pydantic-ai's
    `final_result*` tools and tools pydantic-ai answered as output tools are recognised without it.
    Raises `ValueError` naming the index of the first malformed message.
    """
    items = _load(messages)
    builder = _Builder(agent, frozenset(output_tools))
    kind = detect_format(items)
    if kind == 'pydantic-ai':
        _read_pydantic_ai(items, builder)
    elif kind == 'openai':
        _read_openai(items, builder)
    else:
        _read_ragas(items, builder)
    return builder.build(unanswered='ok' if kind == 'ragas' else 'deferred')


def detect_format(messages: Sequence[Any] | str | bytes) -> ConversationFormat:
    """The format of a conversation; an empty one counts as pydantic-ai. `ValueError` when formats mix."""
    items = _load(messages)
    found: ConversationFormat | None = None
    for index, message in enumerate(items):
        kind = _format_of(message)
        if kind is None:
            raise ValueError(f'message {index}: not a pydantic-ai, OpenAI chat or ragas message: {_short(message)}')
        if found is not None and kind != found:
            raise ValueError(f'message {index} is a {kind} message, but message 0 is {found}: formats cannot mix')
        found = kind
    return found or 'pydantic-ai'


def _load(messages: Sequence[Any] | str | bytes) -> Sequence[Any]:
    if isinstance(messages, (str, bytes)):
        messages = load_json(messages)
    if isinstance(messages, Mapping) or not isinstance(messages, Sequence):
        raise ValueError(f'expected a list of messages, got {type(messages).__name__}')
    return messages


def is_message(value: object) -> bool:
    """Whether `value` is a message of one of the three formats (not, say, a bare tool call)."""
    return _format_of(value) is not None


def _format_of(message: object) -> ConversationFormat | None:
    if _get(message, 'kind') in ('request', 'response') and _get(message, 'parts') is not None:
        return 'pydantic-ai'
    if isinstance(_get(message, 'role'), str):
        return 'openai'
    if _get(message, 'type') in ('human', 'ai', 'tool', 'system'):
        return 'ragas'
    return None


def _get(obj: object, key: str) -> Any:
    """A field of a dict (JSON form) or an attribute of an object (in-memory form)."""
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def _short(value: object) -> str:
    try:
        text = repr(value)
    except RecursionError:  # nested too deeply for repr: reprlib stops a few levels down
        text = reprlib.repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


@dataclass
class _Call:
    """A call as it is being read: issued by a response, answered (or not) by a later message."""

    name: str
    arguments: dict[str, Any] | None
    raw: str | None
    problem: str | None
    call_id: str | None
    issued_by: int
    start: datetime
    status: CallStatus | None = None
    stage: FailureStage | None = None
    result: str | None = None
    end: datetime | None = None


class _Builder:
    """Collects requests and calls in conversation order, matches answers to calls, builds the records."""

    def __init__(self, agent: str | None, output_tools: frozenset[str]) -> None:
        self.agent = agent
        self.path: tuple[str, ...] = (agent,) if agent is not None else ()
        self.output_tools = set(output_tools)
        self.calls: list[_Call] = []
        self.requests: list[ModelRequest] = []
        self.notes: list[str] = []
        self.times: list[datetime] = []
        self.turns: list[datetime] = []
        """When each turn began: a user prompt after a model response starts one."""
        self._answered = 0
        self._waiting: dict[str, list[_Call]] = {}
        """Calls not yet answered, by call id, in the order they were issued."""

    def prompt(self, when: datetime) -> None:
        if not self.turns or len(self.requests) > self._answered:
            self.turns.append(when)
            self._answered = len(self.requests)
        self.times.append(when)

    def response(self, when: datetime, model: object, usage: object) -> int:
        tokens = {key: _tokens(usage, *names) for key, names in _TOKEN_FIELDS.items()}
        cost = _get(usage, 'cost') if usage is not None else None
        self.requests.append(
            ModelRequest(
                model=model if isinstance(model, str) else None,
                operation=genai.CHAT,
                **tokens,
                cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
                agent=self.agent,
                agent_path=self.path,
                start=when,
                end=when,
                span_id=len(self.requests),
            )
        )
        self.times.append(when)
        return len(self.requests) - 1

    def call(self, index: int, name: object, args: object, call_id: object, issued_by: int, when: datetime) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f'message {index}: tool call without a name: {_short(name)}')
        arguments, raw, problem = _arguments(args)
        ident = call_id if isinstance(call_id, str) else None
        call = _Call(name, arguments, raw, problem, ident, issued_by, when)
        self.calls.append(call)
        if ident is not None:
            self._waiting.setdefault(ident, []).append(call)

    def answer(
        self,
        index: int,
        call_id: object,
        status: CallStatus | None,
        *,
        name: object = None,
        stage: FailureStage | None = None,
        content: object = None,
        when: datetime | None = None,
    ) -> None:
        """Resolve the first unanswered call with `call_id` (or, without an id, with `name`, else the next one)."""
        call = self._pending(call_id, name)
        if call is None:
            self.notes.append(f'message {index}: answer to {name or "a tool"!r} ({call_id!r}) matches no call; ignored')
            return
        text = content if isinstance(content, str) else None
        if text is not None and text.startswith(_OUTPUT_TOOL_REPLIES):
            self.output_tools.add(call.name)
        if text in _NOT_EXECUTED_REPLIES:
            self.notes.append(f'message {index}: call {call.name!r} ({call.call_id!r}) skipped: {text}')
            self.calls.remove(call)
            return
        call.status, call.stage, call.end = status, stage, when
        call.result = None if content is None else text if text is not None else _json(content)

    def _pending(self, call_id: object, name: object) -> _Call | None:
        if isinstance(call_id, str):  # by id, without a scan: a long conversation reads in linear time
            waiting = self._waiting.get(call_id)
            while waiting:
                call = waiting.pop(0)
                if call.status is None:
                    return call
            return None
        open_calls = [c for c in self.calls if c.status is None]
        if isinstance(name, str):
            return next((c for c in open_calls if c.name == name), None)
        return open_calls[0] if open_calls else None

    def build(self, *, unanswered: CallStatus) -> Trajectory:
        records = [self._record(position, call, unanswered) for position, call in enumerate(self.calls)]
        agents: tuple[AgentRun, ...] = ()
        if self.agent is not None:
            start, end = (min(self.times), max(self.times)) if self.times else (_EPOCH, _EPOCH)
            bounds = [start, *self.turns[1:], end] if len(self.turns) > 1 else [start, end]
            agents = tuple(
                AgentRun(self.agent, self.path, turn, begin, finish)
                for turn, (begin, finish) in enumerate(pairwise(bounds))
            )
        return Trajectory(tuple(records), tuple(self.requests), agents, tuple(self.notes))

    def _record(self, position: int, call: _Call, unanswered: CallStatus) -> ToolCall:
        name = call.name
        is_output = name in self.output_tools or name == pydantic_ai.OUTPUT_TOOL
        is_output = is_output or name.startswith(pydantic_ai.OUTPUT_TOOL_PREFIX)
        return ToolCall(
            name=name,
            arguments=call.arguments,
            raw_arguments=call.raw,
            arguments_problem=call.problem,
            call_id=call.call_id,
            result=call.result,
            status=call.status or unanswered,
            failure_stage=call.stage,
            agent=self.agent,
            agent_path=self.path,
            start=call.start,
            end=call.end or call.start,
            span_id=position,
            issued_by=call.issued_by,
            is_output_function=is_output,
        )


_TOKEN_FIELDS = {
    'input_tokens': ('input_tokens', 'request_tokens', 'prompt_tokens'),
    'output_tokens': ('output_tokens', 'response_tokens', 'completion_tokens'),
    'cache_read_tokens': ('cache_read_tokens',),
    'cache_write_tokens': ('cache_write_tokens',),
}


def _tokens(usage: object, *names: str) -> int:
    for name in names:
        value = _get(usage, name) if usage is not None else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


def _arguments(args: object) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """`(parsed, raw, problem)`, parsed as spans' arguments are; the text is what the model sent."""
    if args is None or args == '':
        return {}, None if args is None else '', None  # pydantic-ai reads no arguments as `{}`
    if not isinstance(args, str) and too_deep(args):
        return None, None, f'are {TOO_DEEP}'
    if isinstance(args, Mapping):
        return dict(args), _json(args), None
    if not isinstance(args, str):
        return None, None, f'are not a JSON object: {args!r}'
    parsed, problem = parse_arguments(args, quote=True)
    return parsed, args, problem


def _json(value: object) -> str:
    return pydantic_core.to_json(value, fallback=str).decode()


def _when(value: object, index: int) -> datetime:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace('Z', '+00:00'))
        except ValueError:
            pass
    return _EPOCH + timedelta(milliseconds=index)


# -- pydantic-ai -----------------------------------------------------------------------------------


def _read_pydantic_ai(messages: Sequence[Any], builder: _Builder) -> None:
    last_response: int | None = None
    previous: datetime | None = None
    for index, message in enumerate(messages):
        parts = _get(message, 'parts')
        if isinstance(parts, (str, bytes, Mapping)) or not isinstance(parts, Sequence):
            raise ValueError(f'message {index}: parts must be a list, got {_short(parts)}')
        # A request built by hand has no timestamp of its own (its parts may): a message without one
        # follows the one before it, so the order of prompts and calls, and with it the turns, holds.
        stamp = _get(message, 'timestamp')
        if stamp is None:
            stamp = next((t for part in parts if (t := _get(part, 'timestamp')) is not None), None)
        if stamp is None and previous is not None:
            stamp = previous + timedelta(microseconds=1)
        when = _when(stamp, index)
        if previous is not None and (when.tzinfo is None) == (previous.tzinfo is None) and when <= previous:
            # Not after the message before it (messages made within one clock tick, by a scripted
            # model): the order of the history decides, so a prompt never ties with the answer before it.
            when = previous + timedelta(microseconds=1)
        previous = when
        if _get(message, 'kind') == 'response':
            last_response = builder.response(when, _get(message, 'model_name'), _get(message, 'usage'))
            for part in parts:
                if _get(part, 'part_kind') == 'tool-call':
                    args = _get(part, 'args')
                    builder.call(index, _get(part, 'tool_name'), args, _get(part, 'tool_call_id'), last_response, when)
            continue
        if any(_get(part, 'part_kind') == 'user-prompt' for part in parts):
            builder.prompt(when)
        for part in parts:
            _read_request_part(index, part, builder, when)
        if _get(message, 'state') == 'interrupted' and index == len(messages) - 1:
            # Recent pydantic-ai marks a run that died while answering these calls (a tool raised): spans agree.
            for call in builder.calls:
                if call.status is None and call.issued_by == last_response:
                    call.status, call.stage = 'failed', 'raised'


def _read_request_part(index: int, part: object, builder: _Builder, default_when: datetime) -> None:
    kind = _get(part, 'part_kind')
    if kind not in ('tool-return', 'retry-prompt'):
        return
    name, content, call_id = _get(part, 'tool_name'), _get(part, 'content'), _get(part, 'tool_call_id')
    when = _when(_get(part, 'timestamp'), index) if _get(part, 'timestamp') is not None else default_when
    if kind == 'retry-prompt':
        if name is None:
            return  # a retry of the output, answering no call
        validation = not isinstance(content, str) or content.startswith(_UNKNOWN_TOOL_PROMPT)
        stage: FailureStage = 'validation' if validation else 'retry'
        builder.answer(index, call_id, 'failed', name=name, stage=stage, content=content, when=when)
        return
    outcome = _get(part, 'outcome') or 'success'
    if outcome == 'success':
        builder.answer(index, call_id, 'ok', name=name, content=content, when=when)
    elif outcome == 'denied':
        builder.answer(index, call_id, 'deferred', name=name, content=content, when=when)
    elif outcome == 'retried':
        cause = _get(_get(part, 'retry'), 'cause')
        validation = cause in _VALIDATION_CAUSES or (cause is None and not isinstance(content, str))
        stage = 'validation' if validation else 'retry'
        builder.answer(index, call_id, 'failed', name=name, stage=stage, content=content, when=when)
    else:  # 'failed' (the tool raised) or 'interrupted' (the run died first)
        builder.answer(index, call_id, 'failed', name=name, stage='raised', content=content, when=when)


# -- OpenAI chat completions -----------------------------------------------------------------------


def _read_openai(messages: Sequence[Any], builder: _Builder) -> None:
    for index, message in enumerate(messages):
        role, when = _get(message, 'role'), _when(None, index)
        if role == 'user':
            builder.prompt(when)
        elif role == 'assistant':
            issued = builder.response(when, _get(message, 'model'), _get(message, 'usage'))
            for call in _list(_get(message, 'tool_calls'), index, 'tool_calls'):
                function = _get(call, 'function')
                if function is None:
                    builder.notes.append(f'message {index}: {_get(call, "type")!r} tool call skipped: not a function')
                    continue
                name, args = _get(function, 'name'), _get(function, 'arguments')
                builder.call(index, name, args, _get(call, 'id'), issued, when)
            legacy = _get(message, 'function_call')  # before `tools`: one call per message, no id
            if legacy is not None:
                builder.call(index, _get(legacy, 'name'), _get(legacy, 'arguments'), None, issued, when)
        elif role == 'tool':
            call_id = _get(message, 'tool_call_id')
            if not isinstance(call_id, str):
                raise ValueError(f'message {index}: tool message without a tool_call_id')
            builder.answer(index, call_id, 'ok', content=_get(message, 'content'), when=when)
        elif role == 'function':
            name = _get(message, 'name')
            builder.answer(index, None, 'ok', name=name, content=_get(message, 'content'), when=when)


def _list(value: object, index: int, field: str) -> Sequence[Any]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ValueError(f'message {index}: {field} must be a list, got {_short(value)}')
    return value


# -- ragas / LangChain ---------------------------------------------------------------------------


def _read_ragas(messages: Sequence[Any], builder: _Builder) -> None:
    for index, message in enumerate(messages):
        kind, when = _get(message, 'type'), _when(None, index)
        if kind == 'human':
            builder.prompt(when)
        elif kind == 'ai':
            metadata = _get(message, 'response_metadata')
            model = _get(metadata, 'model_name') if metadata is not None else None
            issued = builder.response(when, model, _get(message, 'usage_metadata'))
            for call in _list(_get(message, 'tool_calls'), index, 'tool_calls'):
                builder.call(index, _get(call, 'name'), _get(call, 'args'), _get(call, 'id'), issued, when)
        elif kind == 'tool':
            # ragas' ToolMessage has no call id: it answers the next unanswered call. LangChain's has one.
            failed = _get(message, 'status') == 'error'
            status: CallStatus = 'failed' if failed else 'ok'
            call_id, content = _get(message, 'tool_call_id'), _get(message, 'content')
            builder.answer(index, call_id, status, stage='raised' if failed else None, content=content, when=when)
