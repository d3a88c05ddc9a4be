"""A realistic `agentic-evals-otel run` workload: traces of a pydantic-ai agent with a sub-agent, and a dataset.

Usage (from the repository root): `python -m benchmarks.workload DIR [--traces N] [--real-runs K] [--seed S]`.

Writes `DIR/traces.otlp.jsonl` (N traces, one OTLP JSON line each, as `write_otlp_json` writes them) and
`DIR/dataset.yaml` (one case per trace, found by the root span's `case_name`).

The traces come from the scripted support agent of `fixtures/support_agent.py` (a `support` agent whose
`ask_billing` tool runs the `billing` sub-agent), run for real through pydantic-ai's instrumentation and
the OpenTelemetry SDK and captured with `agentic_evals.capture`. Each run gets its own plan drawn from the
seed: an order id, a product category, an FAQ query, the order of the support agent's steps, one or two
calls per model response, optional extra steps; one run in eight is the regressed variant (the billing
sub-agent refunds ten times the amount) and one in ten skips the policy check. A run has 15 to 24 spans,
about 20 on average (the case span, two agent runs, about 9 model requests and 8 tool calls), with the
full message history on every model request, as pydantic-ai records it: about 70 KB a line.

A real run takes about 80 ms, so 10,000 of them would take 13 minutes: `K` real runs (default 400) are
made, and trace `i` is real run `i % K` written again under a fresh trace id, fresh span ids (parent links
rewritten to match) and its own case name; the dataset's case `i` expects what run `i % K` was planned to
do. Every line is therefore a real pydantic-ai trace, and the replicas differ only in their ids and names.

Each case has four or five evaluators of its own (`TrajectoryMatch` on the support agent alone,
`ArgumentCorrectness` on the order lookup and, for half the cases, on the refund, `ToolCorrectness` on
the billing sub-agent, `ToolCallMatch` in superset mode) and the dataset three for every case
(`MaxToolCalls`, `MaxModelRequests`, `MaxTokens`): 7 or 8 per case.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TRACES_FILE = 'traces.otlp.jsonl'
DATASET_FILE = 'dataset.yaml'
TRACES = 10_000
REAL_RUNS = 400
SEED = 12

Call = tuple[str, dict[str, object]]
"""A tool call: its tool name and arguments."""

_CATEGORIES = ('electronics', 'books', 'garden', 'toys', 'kitchen', 'sports')
_QUERIES = ('refund time', 'return label', 'damaged parcel', 'shipping time Norway', 'warranty', 'exchange')


@dataclass(frozen=True)
class Plan:
    """What one run of the support agent is scripted to do (and what its case expects)."""

    prompt: str
    steps: list[list[tuple[str, dict[str, object]]]]
    """The support agent's tool calls, one inner list per model response."""
    expected: list[list[tuple[str, dict[str, object]]]]
    """The good run's steps: what the case expects (the same as `steps` unless the plan is regressed)."""
    regressed: bool
    order_id: str
    answer: str


def plan_run(rng: random.Random, index: int) -> Plan:
    order_id = f'{rng.choice("ABCDEFGH")}{100 + index}'
    category = rng.choice(_CATEGORIES)
    query = rng.choice(_QUERIES)
    lookup: Call = ('lookup_order', {'order_id': order_id})
    policy: Call = ('check_refund_policy', {'category': category})
    faq: Call = ('search_faq', {'query': query})
    billing: Call = ('ask_billing', {'request': f'refund order {order_id}, 25.00 EUR'})
    escalate: Call = ('escalate', {'reason': 'damaged delivery', 'order_id': order_id})
    steps: list[list[Call]] = [[lookup]]
    steps.append([policy, faq] if rng.random() < 0.5 else [policy])
    if len(steps[-1]) == 1 or rng.random() < 0.4:
        steps.append([faq])
    steps.append([billing])
    if rng.random() < 0.8:
        steps.append([escalate])
    if rng.random() < 0.3:
        again: Call = ('search_faq', {'query': f'{query} {category}'})
        steps.append([again])
    if rng.random() < 0.7:  # the order looked up again once refunded
        steps.append([lookup])
    expected = steps
    regressed = index % 8 == 7
    if index % 10 == 3:  # skips the policy check: its trajectory and its calls differ from the expected ones
        steps = [[call for call in response if call[0] != 'check_refund_policy'] for response in steps]
        steps = [response for response in steps if response]
    return Plan(
        prompt=f'Order {order_id} ({category}) arrived broken; I want my money back. {query}?',
        steps=steps,
        expected=expected,
        regressed=regressed,
        order_id=order_id,
        answer=f'Your refund for order {order_id} is on its way.',
    )


async def _run(plan: Plan, name: str, provider: Any) -> None:
    sys.path.insert(0, str(ROOT / 'fixtures'))
    from pydantic_ai import InstrumentationSettings
    from support_agent import SupportCase, _agents  # type: ignore[import-not-found]

    case = SupportCase(prompt=plan.prompt, baseline=plan.steps, regressed=plan.steps, answer=plan.answer)
    settings = InstrumentationSettings(tracer_provider=provider, version=5)
    support = _agents(case, 'regressed' if plan.regressed else 'baseline', settings)
    tracer = provider.get_tracer('agentic_evals.benchmarks.workload')
    with tracer.start_as_current_span(f'case: {name}', attributes={'case_name': name}):
        await support.run(plan.prompt)


def real_runs(plans: list[Plan], path: Path) -> None:
    """Run every plan through pydantic-ai and the OTel SDK, captured, into `path` (one trace per line)."""
    from opentelemetry.sdk.trace import TracerProvider

    from agentic_evals import capture
    from agentic_evals.traces import write_otlp_json

    provider = TracerProvider()
    path.write_text('')
    for index, plan in enumerate(plans):
        with capture(provider) as captured:
            asyncio.run(_run(plan, case_name(index), provider))
        write_otlp_json(captured.spans, path, append=True)


def case_name(index: int) -> str:
    return f'case-{index:05d}'


def _spans(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span for resource in request['resourceSpans'] for scope in resource['scopeSpans'] for span in scope['spans']
    ]


def replicate(real: list[str], count: int, rng: random.Random) -> list[str]:
    """`count` lines: line `i` is `real[i % len(real)]` under fresh ids and the case name `case_name(i)`."""
    lines = []
    for index in range(count):
        request = json.loads(real[index % len(real)])
        trace_id = f'{rng.getrandbits(128) | 1:032x}'
        spans = _spans(request)
        fresh = {span['spanId']: f'{rng.getrandbits(64) | 1:016x}' for span in spans}
        for span in spans:
            span['traceId'] = trace_id
            span['spanId'] = fresh[span['spanId']]
            if span.get('parentSpanId'):
                span['parentSpanId'] = fresh[span['parentSpanId']]
            for attribute in span.get('attributes', ()):
                if attribute['key'] == 'case_name':
                    attribute['value'] = {'stringValue': case_name(index)}
                    span['name'] = f'case: {case_name(index)}'
        lines.append(json.dumps(request, separators=(',', ':')) + '\n')
    return lines


def _yaml_string(value: object) -> str:
    return json.dumps(value)  # a JSON string is a YAML flow scalar


def _flow(value: object) -> str:
    """A YAML flow mapping or sequence, written as JSON (YAML 1.2 flow syntax reads it)."""
    return json.dumps(value, separators=(', ', ': '))


def dataset_yaml(plans: list[Plan], count: int) -> str:
    out = [
        '# Generated by benchmarks/workload.py: one case per trace, found by its case_name.',
        'name: support_workload',
        'cases:',
    ]
    for index in range(count):
        plan = plans[index % len(plans)]
        calls = [call for response in plan.expected for call in response]
        out.append(f'- name: {case_name(index)}')
        out.append(f'  inputs: {_yaml_string(plan.prompt)}')
        out.append('  evaluators:')
        out.append('  - TrajectoryMatch:')
        out.append(f'      expected_trajectory: {_flow([name for name, _ in calls])}')
        out.append('      agent: support')
        out.append('      include_subagents: false')
        out.append('      evaluation_name: support_trajectory')
        out.append('  - ArgumentCorrectness:')
        out.append('      tool_name: lookup_order')
        out.append(f'      expected_arguments: {_flow({"order_id": plan.order_id})}')
        if index % 2 == 1:
            out.append('  - ArgumentCorrectness:')
            out.append('      tool_name: issue_refund')
            out.append('      expected_arguments: {order_id: A100, amount: 25.0}')
            out.append('      agent: billing')
            out.append('      evaluation_name: refund_amount')
        out.append('  - ToolCorrectness:')
        out.append('      expected_tools: [get_payment, issue_refund]')
        out.append('      agent: billing')
        out.append('      evaluation_name: billing_tools')
        out.append('  - ToolCallMatch:')
        out.append('      expected_calls:')
        for name, arguments in calls[:2]:
            out.append(f'      - {{name: {name}, arguments: {_flow(arguments)}}}')
        out.append('      - {name: ask_billing}')
        out.append('      mode: superset')
        out.append('      agent: support')
    out += ['evaluators:', '- MaxToolCalls: 12', '- MaxModelRequests: 12', '- MaxTokens: 20000', '']
    return '\n'.join(out)


def generate(directory: Path, *, traces: int = TRACES, real: int = REAL_RUNS, seed: int = SEED) -> tuple[Path, Path]:
    """Write the traces and the dataset into `directory`; returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    real = min(real, traces)
    plans = [plan_run(rng, index) for index in range(real)]
    base = directory / 'real-runs.otlp.jsonl'
    real_runs(plans, base)
    lines = base.read_text().splitlines(keepends=True)
    base.unlink()
    assert len(lines) == real, f'{len(lines)} traces captured for {real} runs'
    traces_path, dataset_path = directory / TRACES_FILE, directory / DATASET_FILE
    with traces_path.open('w') as file:
        file.writelines(replicate(lines, traces, rng))
    dataset_path.write_text(dataset_yaml(plans, traces))
    return traces_path, dataset_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.workload', description=__doc__.splitlines()[0])
    parser.add_argument('directory', type=Path)
    parser.add_argument('--traces', type=int, default=TRACES)
    parser.add_argument('--real-runs', type=int, default=REAL_RUNS)
    parser.add_argument('--seed', type=int, default=SEED)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    traces, dataset = generate(args.directory, traces=args.traces, real=args.real_runs, seed=args.seed)
    print(f'{traces} ({traces.stat().st_size:,} bytes), {dataset} ({dataset.stat().st_size:,} bytes)', end='')
    print(f' in {time.perf_counter() - start:.1f} s')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
