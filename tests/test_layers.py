"""Imports flow one way, from the command line down to the span conventions (see docs/architecture.md).

Every module's imports are read from its source (AST), so a lazy import inside a function counts
too. A module may import its own layer's modules and any layer below; an import of a layer above
or of another package on the same level fails the test, naming the module and the line. No two
modules import each other, directly or through others, inside a layer either.
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
    'files': 1,
    'otlp_encoding': 1,
    'capturing': 2,
    'traces': 2,
    'trajectory': 3,
    'conversations': 4,
    'scoring': 5,
    'evaluators': 6,
    'offline': 7,
    'reports': 8,
    'testing': 8,
    'views': 9,
    'engines': 10,
    'cli': 11,
    '__init__': 12,
    '__main__': 12,
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


def _module_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (a `from package import name` of a submodule is that
    submodule; any other name imported from a package is the package's `__init__`)."""
    names = {_module_name(path): path for path in MODULES}
    graph: dict[str, set[str]] = {}
    for module, path in names.items():
        targets: set[str] = set()
        for _, target in _imports(path):
            while target not in names and '.' in target:  # `pkg.name` of a name, not a module: `pkg`
                target = target.rpartition('.')[0]
            if target in names and target != module:
                targets.add(target)
        graph[module] = targets
    return graph


def _import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other (strongly connected, more than one module), each
    as one circle through them, sorted; iterative Tarjan, so a long chain never hits the recursion limit."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(_circle(graph, component))
    return sorted(cycles)


def _circle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """One import circle through the smallest module of `component`: a shortest path back to it."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & component):
                if child == start:
                    return [*paths[node], start]
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    following.append(child)
        frontier = following
    raise AssertionError(f'{sorted(component)} is not strongly connected')


def test_no_module_imports_itself_through_others() -> None:
    assert [' -> '.join(cycle) for cycle in _import_cycles(_module_graph())] == []


def test_the_cycle_check_sees_a_circle() -> None:
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a', 'd'}, 'd': set(), 'e': {'e'}, 'f': {'g'}, 'g': {'f'}}
    assert _import_cycles(graph) == [['a', 'b', 'c', 'a'], ['f', 'g', 'f']]
    assert _module_graph()['agentic_evals.reports.gates'] >= {'agentic_evals.reports.document'}
