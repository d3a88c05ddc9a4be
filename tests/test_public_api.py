"""Docs and examples use only the public surface: `agentic_evals` (its `__all__`) and `agentic_evals.cli.main`.

Everything else in the package is internal and may move (docs/architecture.md), so a code example
that imports `agentic_evals.scoring.metrics`, or a sentence that tells readers to, would break
with the next reorganisation. Python code is read with `ast` (imports, and attributes of an
imported `agentic_evals`); every page and example is also searched as text for dotted
`agentic_evals.` paths, which catches prose, shell lines and skipped blocks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import agentic_evals
from agentic_evals.cli import main

from .test_docs import ROOT, parse_blocks

PUBLIC: dict[str, frozenset[str]] = {
    'agentic_evals': frozenset(agentic_evals.__all__),
    'agentic_evals.cli': frozenset({'main'}),
}
"""Each public namespace and the names it offers."""

PAGES = [*sorted((ROOT / 'docs').glob('*.md')), ROOT / 'README.md']
EXAMPLES = sorted((ROOT / 'examples').glob('*.py'))

_DOTTED = re.compile(r'\bagentic_evals((?:\.[A-Za-z_]\w*)+)')


def _sources() -> list[tuple[str, int, str]]:
    """(where, first line, code) of every Python block in the pages, skipped ones too, and every example."""
    found: list[tuple[str, int, str]] = []
    for page in PAGES:
        for block in parse_blocks(page.read_text(encoding='utf-8')):
            if block.lang == 'python':
                found.append((page.relative_to(ROOT).as_posix(), block.line, block.code))
    found += [(path.relative_to(ROOT).as_posix(), 1, path.read_text(encoding='utf-8')) for path in EXAMPLES]
    return found


def private_uses(code: str, first_line: int = 1) -> list[str]:
    """Every use of a non-public `agentic_evals` name in `code`, as `line: what`."""
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> the public namespace it is bound to
    for node in ast.walk(ast.parse(code)):
        line = first_line + getattr(node, 'lineno', 1) - 1
        if isinstance(node, ast.ImportFrom) and (node.module or '').split('.')[0] == 'agentic_evals':
            module = node.module or ''
            if node.level or module not in PUBLIC:
                found.append(f'{line}: from {module} import ...')
                continue
            found += [f'{line}: from {module} import {a.name}' for a in node.names if a.name not in PUBLIC[module]]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split('.')[0] != 'agentic_evals':
                    continue
                if alias.name not in PUBLIC:
                    found.append(f'{line}: import {alias.name}')
                elif alias.asname is not None:
                    aliases[alias.asname] = alias.name
                else:
                    aliases['agentic_evals'] = 'agentic_evals'
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            namespace = aliases[node.value.id]
            if node.attr not in PUBLIC[namespace] and not node.attr.startswith('__'):
                found.append(f'{first_line + node.lineno - 1}: {namespace}.{node.attr}')
    return found


def private_paths(text: str) -> list[str]:
    """Every dotted `agentic_evals.x.y` in `text` that does not name a public object."""
    found: list[str] = []
    for match in _DOTTED.finditer(text):
        parts = match[1].lstrip('.').split('.')
        if parts[0].startswith('__'):
            continue  # agentic_evals.__all__, __version__, ...
        namespace, name = (
            ('agentic_evals.cli', parts[1]) if parts[0] == 'cli' and len(parts) > 1 else ('agentic_evals', parts[0])
        )
        if name not in PUBLIC[namespace] and not (namespace == 'agentic_evals' and name == 'cli'):
            line = text.count('\n', 0, match.start()) + 1
            found.append(f'{line}: agentic_evals{match[1]}')
    return found


@pytest.mark.parametrize(
    ('line', 'code'), [pytest.param(line, code, id=f'{where}:{line}') for where, line, code in _sources()]
)
def test_examples_import_only_public_names(line: int, code: str) -> None:
    assert private_uses(code, line) == []


@pytest.mark.parametrize('path', [*PAGES, *EXAMPLES], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_docs_name_only_public_paths(path: Path) -> None:
    assert private_paths(path.read_text(encoding='utf-8')) == []


def test_the_public_namespaces_offer_their_names() -> None:
    assert callable(main)
    for name in PUBLIC['agentic_evals']:
        assert hasattr(agentic_evals, name), name


@pytest.mark.parametrize(
    ('code', 'expected'),
    [
        ('from agentic_evals import ToolCorrectness, capture\nfrom agentic_evals.cli import main\n', []),
        ('import agentic_evals\nagentic_evals.evaluator_types()\nagentic_evals.__all__\n', []),
        ('import agentic_evals as ae\nae.ToolCorrectness\n', []),
        (
            'from agentic_evals.scoring.metrics import tool_correctness\n',
            ['1: from agentic_evals.scoring.metrics import ...'],
        ),
        ('from agentic_evals import scoring\n', ['1: from agentic_evals import scoring']),
        ('from agentic_evals.cli import build_parser\n', ['1: from agentic_evals.cli import build_parser']),
        ('\nimport agentic_evals.offline\n', ['2: import agentic_evals.offline']),
        ('import agentic_evals\nagentic_evals.metrics.tool_f1\n', ['2: agentic_evals.metrics']),
        ('import agentic_evals as ae\nae.errors.FileError\n', ['2: agentic_evals.errors']),
    ],
)
def test_the_import_check_sees_private_names(code: str, expected: list[str]) -> None:
    assert private_uses(code) == expected


def test_the_text_check_sees_private_paths() -> None:
    text = (
        'call `agentic_evals.cli.main()` or `agentic_evals.evaluator_types()`; see `agentic_evals.__all__`.\n'
        'plain functions in `agentic_evals.metrics`, or `agentic_evals.cli.common.PROG`,\n'
        'or `agentic_evals.FileError`; not `agentic_evals.TraceFileError`.\n'
    )
    assert private_paths(text) == [
        '2: agentic_evals.metrics',
        '2: agentic_evals.cli.common.PROG',
        '3: agentic_evals.TraceFileError',
    ]
