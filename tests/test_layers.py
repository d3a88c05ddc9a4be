"""Imports flow one way, from the command line down to the span conventions (see docs/architecture.md).

Every module's imports are read from its source (AST), so a lazy import inside a function counts
too. A module may import its own layer's modules and any layer below; an import of a layer above
or of another package on the same level fails the test, naming the module and the line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / 'agentic_evals'

LAYERS: dict[str, int] = {
    'errors': 0,
    'interrupts': 0,
    'conventions': 1,
    'capturing': 2,
    'traces': 2,
    'trajectory': 3,
    'conversations': 4,
    'scoring': 5,
    'evaluators': 6,
    'offline': 7,
    'reports': 8,
    'testing': 8,
    'engines': 9,
    'cli': 10,
    '__init__': 11,
    '__main__': 11,
}
"""Top-level module or package -> its level; packages on one level must not import each other."""


def _layer_of(module: str) -> str:
    """`agentic_evals.scoring.metrics` -> `scoring`; `agentic_evals` -> `__init__`."""
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else '__init__'


def _module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix('')
    parts = list(relative.parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every `agentic_evals` import in `path`."""
    module = _module_name(path)
    package = module if path.name == '__init__.py' else module.rpartition('.')[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.')[: len(package.split('.')) - node.level + 1]
                target = '.'.join([*base, node.module] if node.module else base)
                names = [target] if node.module else [f'{target}.{alias.name}' for alias in node.names]
            else:
                names = [node.module or '']
            found += [(node.lineno, name) for name in names if name.startswith('agentic_evals')]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith('agentic_evals')]
    return found


MODULES = sorted(PACKAGE.rglob('*.py'))


def test_every_top_level_module_has_a_layer() -> None:
    top = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if p.suffix == '.py' or (p / '__init__.py').exists()
    }
    assert top == set(LAYERS)


@pytest.mark.parametrize('path', MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_imports_only_go_down(path: Path) -> None:
    own = _layer_of(_module_name(path))
    wrong = [
        f'{path.relative_to(PACKAGE.parent)}:{line} imports {target} ({_layer_of(target)}, level {LAYERS[_layer_of(target)]})'
        f' from {own} (level {LAYERS[own]})'
        for line, target in _imports(path)
        if _layer_of(target) != own and LAYERS[_layer_of(target)] >= LAYERS[own]
    ]
    assert wrong == []


def test_the_check_sees_a_wrong_import(tmp_path: Path) -> None:
    """The walk above must find relative imports; a module importing upward is caught."""
    module = PACKAGE / 'conventions' / 'genai.py'
    assert all(_layer_of(target) == 'conventions' for _, target in _imports(module))
    lines = _imports(PACKAGE / 'cli' / 'run.py')
    assert any(_layer_of(target) == 'offline' for _, target in lines)
