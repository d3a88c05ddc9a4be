"""capture(): what it collects, from which provider, and that concurrent captures never mix."""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from agentic_evals import Capture, capture, extract_trajectory


def make_agent(provider: TracerProvider) -> Agent[None, str]:
    """An agent that echoes its prompt into one `echo` call, so each run's spans are recognisable."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            prompt = str(messages[0].parts[-1].content)  # type: ignore[union-attr]
            return ModelResponse(parts=[ToolCallPart('echo', {'token': prompt})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(model), name='echoer')
    agent.instrument = InstrumentationSettings(tracer_provider=provider)

    @agent.tool_plain
    def echo(token: str) -> str:
        return token

    return agent


def assert_holds_only(captured: Capture, token: str) -> None:
    trajectory = extract_trajectory(captured.tree)
    assert [(c.name, c.arguments) for c in trajectory.tool_calls] == [('echo', {'token': token})]
    assert len(trajectory.model_requests) == 2
    assert len({s.context.trace_id for s in captured.spans if s.context}) == 1
    assert len(captured.spans) == 4  # agent run, two model requests, one tool call


@pytest.fixture
def provider() -> TracerProvider:
    return TracerProvider()


def test_sync_capture_collects_the_block(provider: TracerProvider) -> None:
    agent = make_agent(provider)
    agent.run_sync('before')
    with capture(provider) as captured:
        agent.run_sync('inside')
    agent.run_sync('after')
    assert_holds_only(captured, 'inside')


ASYNC_CAPTURES = 1_000
THREADS = 32
THREAD_CAPTURES = 320
"""The sizes at which a fuzzing campaign found no cross-talk (issue 8): kept so."""


async def test_a_thousand_concurrent_async_captures_never_mix(provider: TracerProvider) -> None:
    agent = make_agent(provider)

    async def one(i: int) -> Capture:
        async with capture(provider) as captured:
            await agent.run(f'run-{i}')
        return captured

    captures = await asyncio.gather(*(one(i) for i in range(ASYNC_CAPTURES)))
    for i, captured in enumerate(captures):
        assert_holds_only(captured, f'run-{i}')


def test_threads_each_capture_their_own_run(provider: TracerProvider) -> None:
    agent = make_agent(provider)
    barrier = threading.Barrier(THREADS)

    def one(i: int) -> Capture:
        barrier.wait()
        with capture(provider) as captured:
            agent.run_sync(f'thread-{i}')
        return captured

    with ThreadPoolExecutor(THREADS) as pool:
        captures = list(pool.map(one, range(THREAD_CAPTURES)))
    for i, captured in enumerate(captures):
        assert_holds_only(captured, f'thread-{i}')


def test_tasks_and_threads_started_inside_are_captured(provider: TracerProvider) -> None:
    tracer = provider.get_tracer('test')
    with capture(provider) as captured, tracer.start_as_current_span('block'):
        # a thread given a copy of the context: both rules apply
        worker = threading.Thread(
            target=contextvars.copy_context().run, args=(lambda: tracer.start_span('copied').end(),)
        )
        worker.start()
        worker.join()
        # a thread carrying only the OpenTelemetry context: captured through its parent span
        parent = otel_context.get_current()

        def otel_only() -> None:
            token = otel_context.attach(parent)
            tracer.start_span('otel-only').end()
            otel_context.detach(token)

        worker = threading.Thread(target=otel_only)
        worker.start()
        worker.join()
        # a bare thread propagates nothing: its span starts a new trace and is not ours
        worker = threading.Thread(target=lambda: tracer.start_span('bare').end())
        worker.start()
        worker.join()

        async def task() -> None:
            tracer.start_span('in-task').end()

        asyncio.run(task())
    assert sorted(s.name for s in captured.spans) == ['block', 'copied', 'in-task', 'otel-only']


def test_nested_captures_both_see_inner_spans(provider: TracerProvider) -> None:
    tracer = provider.get_tracer('test')
    with capture(provider) as outer:
        tracer.start_span('a').end()
        with capture(provider) as inner:
            tracer.start_span('b').end()
    assert [s.name for s in outer.spans] == ['a', 'b']
    assert [s.name for s in inner.spans] == ['b']


def test_exporter_never_raises_into_the_application(provider: TracerProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Capture, span: object) -> None:
        raise RuntimeError('boom')

    monkeypatch.setattr(Capture, '_add', broken)
    agent = make_agent(provider)
    with capture(provider):
        assert agent.run_sync('still works').output == 'done'


def test_a_provider_that_cannot_record_gives_a_recording_error() -> None:
    from pydantic_evals.otel import SpanTreeRecordingError

    with capture(trace.NoOpTracerProvider()) as captured:
        pass
    assert captured.error is not None
    with pytest.raises(SpanTreeRecordingError, match='NoOpTracerProvider'):
        captured.tree  # noqa: B018


GLOBAL_SETUPS = {
    'nothing configured': '',
    'sdk provider': 'from opentelemetry import trace\n'
    'from opentelemetry.sdk.trace import TracerProvider\n'
    'trace.set_tracer_provider(TracerProvider())\n',
    'logfire': 'import logfire\nlogfire.configure(send_to_logfire=False, console=False)\n',
}


@pytest.mark.slow
@pytest.mark.parametrize('setup', GLOBAL_SETUPS.values(), ids=GLOBAL_SETUPS.keys())
def test_global_providers(setup: str) -> None:
    """Each global setup in its own process: the global provider can be set once per process."""
    script = setup + textwrap.dedent(
        """
        from pydantic_ai import Agent
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.models.instrumented import InstrumentationSettings
        from agentic_evals import capture, extract_trajectory

        agent = Agent(TestModel(), name='plain')
        agent.instrument = InstrumentationSettings()

        @agent.tool_plain
        def ping(n: int) -> int:
            return n

        with capture() as captured:
            agent.run_sync('hi')
        trajectory = extract_trajectory(captured.tree)
        print([c.name for c in trajectory.tool_calls], len(trajectory.model_requests), trajectory.agent_names)
        """
    )
    done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "['ping'] 2 ['plain']"


def test_entering_a_capture_again_starts_a_new_block(provider: TracerProvider) -> None:
    tracer = provider.get_tracer('test')
    captured = capture(provider)
    with captured:
        tracer.start_span('first').end()
    with captured:
        tracer.start_span('second').end()
    assert [s.name for s in captured.spans] == ['second']
    assert [n.name for n in captured.tree] == ['second']
