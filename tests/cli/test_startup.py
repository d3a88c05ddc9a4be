"""`--help` must not pay for pydantic-evals, pydantic-ai or rich: the command line imports them in the handlers.

`benchmarks/cli_startup.py` measures the CPU; this checks the cause, statically: what each module on
the way to the parser imports at its top level (imports under `if TYPE_CHECKING:` and inside
functions run later, or never).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / 'agentic_evals'
LIGHT = {
    'agentic_evals',
    'agentic_evals.errors',
    'agentic_evals.interrupts',
    'agentic_evals.reports',
    'agentic_evals.views.text',
}
"""The package's own modules the parser may load; `agentic_evals.cli.*` too."""


def _top_level_imports(path: Path) -> list[str]:
    package = 'agentic_evals' if path.parent == PACKAGE else f'agentic_evals.{path.parent.name}'
    found: list[str] = []
    for node in ast.parse(path.read_text(encoding='utf-8')).body:
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit('.', node.level - 1)[0] if node.level else ''
            module = '.'.join(filter(None, [base, node.module]))
            found += [module] if node.module else [f'{module}.{alias.name}' for alias in node.names]
    return found


def _heavy(module: str) -> bool:
    if module.startswith('agentic_evals.cli') or module in LIGHT:
        return False
    return module.split('.')[0] not in sys.stdlib_module_names


@pytest.mark.parametrize(
    'module',
    [
        '__main__.py',
        'cli/__init__.py',
        'cli/common.py',
        'cli/run.py',
        'cli/compare.py',
        'cli/inspect.py',
        'cli/schema.py',
        '__init__.py',
    ],
)
def test_the_way_to_the_parser_imports_nothing_heavy(module: str) -> None:
    assert [m for m in _top_level_imports(PACKAGE / module) if _heavy(m)] == []


def test_the_import_reader_sees_imports() -> None:
    assert _heavy('pydantic_evals.reporting') and _heavy('agentic_evals.views.table') and not _heavy('argparse')
    assert _top_level_imports(PACKAGE / 'cli' / 'compare.py') == [
        '__future__',
        'argparse',
        'sys',
        'pathlib',
        'typing',
        'agentic_evals.cli.common',
    ]
