"""Span names and attribute keys live in `agentic_evals.conventions` only.

Every module outside `conventions/` is read (AST): a string constant that is an attribute key or
span name of an instrumentation family fails the test, naming the module and line. Docstrings are
prose and may name keys; anything the code compares or looks up must come from a family module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agentic_evals.conventions import genai, google_adk, otel, pydantic_ai, pydantic_evals

PACKAGE = Path(__file__).resolve().parents[2] / 'agentic_evals'
CONVENTIONS = PACKAGE / 'conventions'

PREFIXES = ('gen_ai.', 'pydantic_ai.', 'logfire.', 'exception.', 'llm.', 'openinference.', 'traceloop.', 'gcp.vertex.')
"""Attribute namespaces of the families (today's and those the next ones bring)."""

NAMES = {
    'operation.cost',
    'final_result',
    'case_name',
    'tool_arguments',
    'tool_response',
    'agent_name',
    'running tool',
    'running tools',
    'running output function',
    'agent run',
    'invoke_agent',
    'execute_tool',
    'chat',
    'generate_content',
    'text_completion',
    '(merged tools)',
    'INVALID_JSON',
    'exception',
}
"""Keys, span names and values that are a family's though they have no namespace."""

SPAN_NAME_PREFIXES = (
    'execute_tool ',
    'invoke_agent ',
    'running output function:',
    'invalid tool call:',
    'running tool:',
)


def _family_strings() -> set[str]:
    """Every dotted or multi-word string constant the family modules define (keys and span names)."""
    found: set[str] = set()
    for module in (genai, google_adk, otel, pydantic_ai, pydantic_evals):
        for value in vars(module).values():
            values = value if isinstance(value, (tuple, frozenset)) else (value,)
            found.update(v for v in values if isinstance(v, str) and re.search(r'[. ]', v.strip()))
    return found


FORBIDDEN = NAMES | _family_strings()
_DOTTED = re.compile(
    '|'.join(
        [rf'(?<![\w.]){re.escape(prefix)}[\w.]*\w(?![\w.]*\()' for prefix in PREFIXES]
        + [rf'(?<![\w.]){re.escape(key)}(?![\w.])' for key in sorted(FORBIDDEN) if '.' in key]
    )
)
"""A namespaced or dotted key anywhere in a literal (in a message it should come from a constant too);
a call such as `logfire.configure()` is a function, not a key."""


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, 'body', None)
        if isinstance(body, list):
            # A module, class or function docstring, and the attribute docstrings after assignments.
            for i, statement in enumerate(body):
                is_string = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                if is_string and (i == 0 or isinstance(body[i - 1], (ast.Assign, ast.AnnAssign))):
                    found.add(id(statement.value))
    return found


def offending(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    skip = _docstrings(tree)
    hits: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
            if text in FORBIDDEN or text.startswith(SPAN_NAME_PREFIXES) or _DOTTED.search(text):
                hits.append((node.lineno, text))
    return hits


MODULES = sorted(p for p in PACKAGE.rglob('*.py') if CONVENTIONS not in p.parents)


@pytest.mark.parametrize('path', MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_family_literal_outside_conventions(path: Path) -> None:
    hits = offending(path.read_text(encoding='utf-8'))
    assert [f'{path.relative_to(PACKAGE.parent)}:{line}: {text!r}' for line, text in hits] == []


def test_the_check_sees_what_it_should() -> None:
    source = '''
"""Docstrings may name gen_ai.tool.name."""
KEY = 'gen_ai.tool.name'
"""An attribute docstring may too: 'final_result'."""
span = node.name.startswith('execute_tool ')
cost = attributes['operation.cost']
message = f'{key} is gen_ai.tool.name, not a string'
fine = ('gen_ai', 'an exception was raised', 'chat.py', 'a chat', 'call logfire.configure() first')
'''
    assert sorted(offending(source)) == [
        (3, 'gen_ai.tool.name'),
        (5, 'execute_tool '),
        (6, 'operation.cost'),
        (7, ' is gen_ai.tool.name, not a string'),
    ]


def test_the_family_modules_are_where_the_keys_are() -> None:
    assert {'gen_ai.tool.name', 'pydantic_ai.tool.deferral.name', 'exception.type', 'running tool'} <= FORBIDDEN
