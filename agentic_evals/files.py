"""Data files read with limits: JSON and YAML text to data, or a `FileError` with the line.

The dataset and evaluators files (`offline/suite.py`) and the JSON report (`reports/document.py`) are
read here, so a small hostile file cannot take the process down: a size limit (`MAX_FILE_BYTES`), a
nesting limit (`MAX_DEPTH`), a limit on what YAML aliases may expand to (`MAX_ALIAS_VALUES`: a
480-byte "billion laughs" file would otherwise grow to gigabytes in pydantic's hands) and on the
digits of an integer (`MAX_INT_DIGITS`, Python's own limit, enforced on every version).

YAML is scanned and parsed by libyaml when PyYAML has it (`yaml.CSafeLoader`'s parser: a 10,000-case
dataset reads several times faster), and composed by PyYAML's Python code with the limits, or by libyaml
when the document has no alias; a document without aliases is then constructed by a short constructor of
ours (`construct_plain`) with `SafeConstructor`'s values. An error is worded by the pure-Python loader,
so messages and lines do not depend on the build.
"""

from __future__ import annotations

import gc
import importlib
import json
import re
from pathlib import Path
from typing import Any

from .errors import AgenticEvalsError, FileError

# PyYAML ships no type stubs; it is only a parser at the file boundary here (pydantic-evals depends on it).
yaml: Any = importlib.import_module('yaml')

MAX_FILE_BYTES = 256 * 1024 * 1024
"""Dataset, evaluators and report files larger than this are refused."""
MAX_DEPTH = 100
"""Nesting levels a dataset or evaluators file may have (hand-written files need a handful)."""
MAX_ALIAS_VALUES = 100_000
"""Values YAML aliases may add to a document when expanded (reusing an evaluator list is a few dozen)."""
MAX_INT_DIGITS = 4300
"""Digits of an integer literal: Python's own limit for converting text (`sys.int_info`), on every version."""


def parse_yaml(path: Path, text: str) -> tuple[object, dict[int, list[int]]]:
    """YAML text's data, and the line of each item of each list in it (by the list's `id`), or a
    `FileError` with the line: bad syntax, a limit passed."""
    loader = _loader_for(text)
    try:
        return _parse_yaml(loader, text)
    except yaml.YAMLError as e:
        error = e
        if loader is not _Loader:  # word the error as the pure-Python loader does: the same message and line
            try:
                _parse_yaml(_Loader, text)
            except yaml.YAMLError as pure:
                error = pure
        mark = getattr(error, 'problem_mark', None)
        problem = getattr(error, 'problem', None) or str(error)
        line = mark.line + 1 if mark is not None else None
        raise FileError(path, f'invalid YAML: {problem}', line=line) from None


def _parse_yaml(loader_class: Any, text: str) -> tuple[object, dict[int, list[int]]]:
    """The data of one YAML document, and the line of each list item (see `_Limits`).

    The garbage collector is paused meanwhile: the parse makes millions of containers none of which is
    garbage, and each collection would walk them all (on a 10,000-case dataset that is most of the parse).
    """
    loader = loader_class(text)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return loader.get_single_data(), loader.item_lines
    finally:
        if collecting:
            gc.enable()
        loader.dispose()


def read_limited(path: Path) -> bytes:
    """The bytes of `path`, refused (`FileError`) beyond `MAX_FILE_BYTES`; `OSError`s are the caller's to word."""
    limit = f'{MAX_FILE_BYTES // (1024 * 1024)} MiB'
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise FileError(path, f'too large: {size:,} bytes (the limit is {limit})')
    with path.open('rb') as file:  # read at most the limit: a FIFO or a device has no size to check
        data = file.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise FileError(path, f'too large: more than {limit}')
    return data


def decode(data: bytes) -> str:
    """UTF-8 text with universal newlines, as `Path.read_text` reads it (`UnicodeDecodeError` if it is not)."""
    text = data.decode('utf-8')
    return text.replace('\r\n', '\n').replace('\r', '\n') if '\r' in text else text


def parse_json(path: Path, text: str, *, max_depth: int | None = None) -> object:
    """JSON text as data, or a `FileError` with the line: bad syntax, a huge integer, nesting too deep."""
    try:
        data = json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as e:
        raise FileError(path, f'invalid JSON: {e.msg} (column {e.colno})', line=e.lineno) from None
    except _HugeInteger:
        match = re.search(rf'\d{{{MAX_INT_DIGITS + 1},}}', text)
        line = text.count('\n', 0, match.start()) + 1 if match else None
        raise FileError(path, f'an integer with more than {MAX_INT_DIGITS} digits', line=line) from None
    except RecursionError:
        depth, line = _deepest(text)
        raise FileError(path, f'nested too deeply ({depth} levels)', line=line) from None
    if max_depth is not None and _depth(data) > max_depth:
        depth, line = _deepest(text)
        raise FileError(path, f'nested too deeply ({depth} levels; the limit is {max_depth})', line=line)
    return data


class _HugeInteger(AgenticEvalsError, ValueError):
    pass


def _bounded_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS + 1 or len(text.lstrip('-')) > MAX_INT_DIGITS:
        raise _HugeInteger(text[:20])
    return int(text)


def _depth(data: object) -> int:
    """How deeply lists and dicts nest in `data` (iteratively: no recursion limit to hit)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, level = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _deepest(text: str) -> tuple[int, int]:
    """(deepest nesting, its 1-based line) of JSON text, counting brackets outside strings."""
    depth = deepest = offset = 0
    for token in _JSON_TOKEN.finditer(text):
        bracket = token[0]
        if bracket in '[{':
            depth += 1
            if depth > deepest:
                deepest, offset = depth, token.start()
        elif bracket in ']}':
            depth -= 1
    return deepest, text.count('\n', 0, offset) + 1


class _Constructing:
    """The constructor hooks every loader shares: limits on integers, errors as YAML errors, and the line
    of each list item kept (by the constructed list's `id`)."""

    item_lines: dict[int, list[int]]

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            data = super().construct_object(node, deep)  # type: ignore[misc]
        except (ValueError, TypeError, OverflowError) as e:  # a bad date, say: PyYAML lets these through
            raise yaml.constructor.ConstructorError(None, None, str(e), node.start_mark) from None
        except (KeyError, AttributeError):  # `!!bool maybe`, `!!timestamp x`: a lookup in PyYAML fails
            kind = str(node.tag).rsplit(':', 1)[-1]
            problem = f'{node.value!r} is not a {kind}'
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from None
        if isinstance(node, yaml.SequenceNode):
            self.item_lines[id(data)] = [child.start_mark.line + 1 for child in node.value]
        return data

    def construct_yaml_int(self, node: Any) -> Any:
        if sum(c.isdigit() for c in node.value) > MAX_INT_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f'an integer with more than {MAX_INT_DIGITS} digits', node.start_mark
            )
        return super().construct_yaml_int(node)  # type: ignore[misc]


class _Limits(_Constructing, yaml.composer.Composer):  # type: ignore[misc]
    """The composer hooks of the loaders that compose in Python: limits on nesting and alias expansion."""

    def _start(self) -> None:
        self.depth = 0
        self.aliased = 0
        self.sizes: dict[int, int] = {}
        """Values each composed node stands for once its aliases are expanded, by node `id`."""
        self.item_lines = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            node = super().compose_node(parent, index)
            if id(node) not in self.sizes:
                raise yaml.composer.ComposerError(None, None, 'an alias inside its own anchor (a cycle)', mark)
            self.aliased += self.sizes[id(node)]
            if self.aliased > MAX_ALIAS_VALUES:
                problem = f'aliases expand the document by more than {MAX_ALIAS_VALUES:,} values'
                raise yaml.composer.ComposerError(None, None, problem, mark)
            return node
        self.depth += 1
        if self.depth > MAX_DEPTH:
            problem = f'nested more than {MAX_DEPTH} levels deep'
            raise yaml.composer.ComposerError(None, None, problem, self.peek_event().start_mark)
        node = super().compose_node(parent, index)
        self.depth -= 1
        children = node.value if isinstance(node, yaml.SequenceNode) else ()
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        self.sizes[id(node)] = 1 + sum(self.sizes[id(child)] for child in children)
        return node


def _deeper_than(root: Any, limit: int) -> bool:
    """Whether a composed node graph nests more than `limit` nodes deep (counted as `_Limits` counts).

    Only collections are walked: a scalar's depth is its parent's plus one, known without a visit.
    """
    scalar, sequence = yaml.ScalarNode, yaml.SequenceNode
    stack = [] if type(root) is scalar else [(root, 1)]
    while stack:
        node, depth = stack.pop()
        value = node.value
        if not value:
            continue
        if depth >= limit:  # its children are one deeper
            return True
        below = depth + 1
        if type(node) is sequence:
            stack += [(child, below) for child in value if type(child) is not scalar]
        else:
            stack += [(child, below) for pair in value for child in pair if type(child) is not scalar]
    return False


class _Loader(_Limits, yaml.SafeLoader):  # type: ignore[misc]
    """PyYAML's pure-Python safe loader with the limits: the fallback, and the wording of every error."""

    def __init__(self, text: str) -> None:
        yaml.SafeLoader.__init__(self, text)
        self._start()


_Loader.add_constructor('tag:yaml.org,2002:int', _Limits.construct_yaml_int)


def _libyaml_parser() -> Any:
    """libyaml's parser class (`yaml.cyaml.CParser`), when PyYAML was built with it; `None` otherwise."""
    if not getattr(yaml, '__with_libyaml__', False):
        return None
    try:
        return importlib.import_module('yaml.cyaml').CParser
    except (ImportError, AttributeError):
        return None


def _fast_loader(CParser: Any) -> Any:
    """The safe loader on libyaml's parser (as `yaml.CSafeLoader`), when PyYAML was built with it.

    Only the scanning and parsing are libyaml's: `CSafeLoader`'s own composer is C code the limits
    cannot hook into (and it recurses once per nesting level, in C), so the document is composed
    by PyYAML's Python composer with the limits, from libyaml's events. The events carry the
    same marks, so item lines are the same; an error is worded again by the pure-Python loader.
    """

    class FastLoader(_Limits, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):  # type: ignore[misc]
        def __init__(self, text: str) -> None:
            CParser.__init__(self, text)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            yaml.composer.Composer.__init__(self)
            self._start()

    FastLoader.add_constructor('tag:yaml.org,2002:int', _Limits.construct_yaml_int)
    return FastLoader


_SCALAR, _SEQUENCE, _MAPPING = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
_STR, _NULL, _BOOL, _SEQ, _MAP = (f'tag:yaml.org,2002:{name}' for name in ('str', 'null', 'bool', 'seq', 'map'))
_KEYS = frozenset({_STR, _NULL, _BOOL, 'tag:yaml.org,2002:int', 'tag:yaml.org,2002:float'})
"""The tags of the keys a mapping may have to be constructed by `construct_plain` (not `<<` or `=`, say)."""


def _composing_loader(CParser: Any) -> Any:
    """The safe loader on libyaml's parser and composer, for documents without aliases (twice as fast).

    With no alias, nothing can expand; libyaml refuses nesting past its own limit (1,000 levels, so
    its recursive composer stays within the C stack), and the composed graph is checked against
    `MAX_DEPTH` before anything is constructed. Construction is Python's, with the same hooks.
    """

    class ComposingLoader(_Constructing, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):  # type: ignore[misc]
        def __init__(self, text: str) -> None:
            CParser.__init__(self, text)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self.item_lines = {}

        def get_single_data(self) -> Any:
            node = self.get_single_node()
            if node is None:
                return None
            if _deeper_than(node, MAX_DEPTH):  # the Python composer words it, with the line
                raise yaml.composer.ComposerError(None, None, f'nested more than {MAX_DEPTH} levels deep', None)
            return self.construct_plain(node)

        def construct_plain(self, node: Any) -> Any:
            """`construct_document(node)` for a tree (no aliases), taking PyYAML's long way only where needed.

            `SafeConstructor` spends more time than libyaml's composer on a large dataset: every node goes
            through `construct_object`'s bookkeeping and a generator. Here the plain nodes (mappings with
            scalar keys, sequences, strings, nulls, booleans) become their values directly, exactly as
            `SafeConstructor` makes them (a later duplicate key's value wins, in the first key's place);
            everything else (numbers, timestamps, binary, merge keys, sets, complex keys, explicit tags,
            errors) is the subtree's `construct_document`, with the hooks. With no aliases no node is shared,
            so constructing subtrees apart builds the same data.
            """
            kind, tag, value = type(node), node.tag, node.value
            if kind is _SCALAR:
                if tag == _STR:
                    return value
                if tag == _NULL:
                    return None
                if tag == _BOOL and value.lower() in self.bool_values:
                    return self.bool_values[value.lower()]
            elif kind is _SEQUENCE and tag == _SEQ:
                items = [self.construct_plain(child) for child in value]
                self.item_lines[id(items)] = [child.start_mark.line + 1 for child in value]
                return items
            elif kind is _MAPPING and tag == _MAP and all(type(k) is _SCALAR and k.tag in _KEYS for k, _ in value):
                return {self.construct_plain(k): self.construct_plain(v) for k, v in value}
            return self.construct_document(node)

    ComposingLoader.add_constructor('tag:yaml.org,2002:int', _Constructing.construct_yaml_int)
    return ComposingLoader


_CParser = _libyaml_parser()
_FastLoader: Any = _fast_loader(_CParser) if _CParser is not None else None
_ComposingLoader: Any = _composing_loader(_CParser) if _CParser is not None else None


def _loader_for(text: str) -> Any:
    """The fastest loader that keeps every limit for `text`: libyaml composes a document without aliases
    (no `*` at all, to be safe: a star in a string only costs the slower composer)."""
    if _ComposingLoader is not None and '*' not in text:
        return _ComposingLoader
    return _FastLoader or _Loader
