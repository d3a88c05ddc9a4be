"""A document without aliases is constructed by `construct_plain`: the same values, of the same types, as
`yaml.safe_load` (and the loader with our limits), and the same errors, for every kind of scalar and structure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentic_evals import FileError, files
from agentic_evals.offline.suite import load_dataset

pytestmark = pytest.mark.skipif(files._ComposingLoader is None, reason='PyYAML built without libyaml')

# Plain scalars (and some quoted or tagged) as SafeConstructor reads them: YAML 1.1 types.
# fmt: off
SCALARS = [
    # strings
    'abc', "'yes'", '"1"', '"~"', "''", '""', "'-'", 'é ü', '"a\\tb"', 'Null!', 'nUll', 'yEs', 'y', 'n',
    '09', '0o17', '1e3', '1_', 'a:b', 'http://x/y', '"2001-12-14"', '!!str 1', '!!str yes', '!!str ~',
    '!<tag:yaml.org,2002:str> 5', '"<<"', "'='",
    # null
    '~', 'null', 'Null', 'NULL', '', '!!null ""', '!!null x',
    # bool
    'yes', 'Yes', 'YES', 'no', 'No', 'NO', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE',
    'on', 'On', 'ON', 'off', 'Off', 'OFF', '!!bool yes', '!!bool "true"', '!!bool OFF',
    # int
    '0', '00', '-0', '+0', '1', '-1', '+1', '1_000', '1__0', '0x1F', '-0x1f', '+0x_a', '017', '-017', '0_7',
    '0b101', '-0b1', '+0b1_0', '1:30', '-1:30:00', '190:20:30', '+1:0', '!!int 12', '!!int "7"', '!!int 0o17',
    '!!int 0x10', '9' * 4300, '-' + '9' * 4300,
    # float
    '1.5', '-1.5', '+1.5', '1.', '1.0e+3', '1.5E-2', '-2.e+1', '1_000.5', '.5', '-.5', '+.5e+1', '.inf', '-.Inf',
    '+.INF', '.nan', '.NaN', '.NAN', '190:20:30.15', '1:30.5', '-0:30.5', '!!float 1', '!!float "1.5"',
    '!!float .inf', '0.0', '-0.0', '._', '._1', '1.5e3', '6.8523015e+5', '685.230_15e+03',
    # timestamps
    '2001-12-14', '2002-1-1', '2001-12-14t21:59:43.10-05:00', '2001-12-14 21:59:43.10 -5',
    '2001-12-15T02:59:43.1Z', '2001-12-15 2:59:43.10', '2001-12-14 21:59:43.1234567', '2001-12-14T21:59:43+05:30',
    '2001-12-14 21:59:43', '!!timestamp 2001-01-01',
    # binary
    '!!binary aGVsbG8=', '!!binary ""', '!!binary "@@@"', '!!binary |\n  aGVs\n  bG8=',
]
# fmt: on

STRUCTURES = [
    '',
    '~\n',
    'just text\n',
    '- 1\n',
    '{}\n',
    '[]\n',
    'a: {}\nb: []\nc: [[], [{}]]\n',
    'a: 1\na: 2\n',  # a duplicate key: the later value, in the first key's place
    'a: 1\nb: 2\na: 3\n',
    '{1: a, 1.0: b, true: c, 2: d}\n',  # equal keys (1 == 1.0 == True): one key, the last value
    '{~: a, null: b, "": c}\n',
    '{yes: a, on: b, no: c}\n',
    '{0x10: a, 16: b, 1:30: c}\n',
    '{2001-12-14: a, 2001-12-14 21:59:43: b}\n',  # timestamp keys
    '? !!binary aGk=\n: bytes key\n',
    '? a\n: b\n? c\n',
    '=: the value key\n',  # `=` as a key is the string '='
    '{a: 1, =: 2}\n',
    '<<: {a: 1, b: 2}\nb: 3\n',  # merge keys
    'x:\n  <<: [{a: 1}, {a: 2, b: 2}]\n  c: 3\n',
    'x: {<<: {a: 1}, a: 0}\n',
    '- !!set {a, b, 1}\n- !!set {}\n',
    '!!omap [a: 1, b: 2, c: 3]\n',
    '!!pairs [a: 1, a: 2]\n',
    '!!omap []\n',
    '!!map {a: 1}\n',
    '!!seq [1, a]\n',
    'cases:\n- name: a\n  inputs: [x, 1, 2.5, yes, ~, 2001-01-01]\n  evaluators:\n  - MaxToolCalls: 6\n',
    'a:\n  b:\n    c:\n    - - - [d, {e: f}]\n',
    'text: |\n  a block\n  scalar\nfolded: >-\n  folded\n  text\nkeep: |+\n  kept\n\n',
    'a: !!str\nb: !!null\n',
    '[{a: 1}, [2, [3, {b: [4]}]], "c"]\n',
    'list:\n- [a, b]\n-\n  - c\n\n  - d\n- {x: [y]}\n',
    '# a comment\n--- # one explicit document\na: 1\n...\n',
    '%YAML 1.1\n---\na: 1\n',
    'a: &x 1\nb: &y [text, &z {c: d}]\n',  # anchors without aliases
]
STRUCTURES += [f'value: {scalar}\nlist:\n- {scalar}\n- [{scalar}]\n' for scalar in SCALARS if '\n' not in scalar]
STRUCTURES += [f'value: {scalar}\n' for scalar in SCALARS if '\n' in scalar]
STRUCTURES += [f'? {scalar}\n: key\n' for scalar in SCALARS if '\n' not in scalar]

BAD = [
    '{[1]: 2}\n',  # unhashable keys
    '? {a: 1}\n: 2\n',
    '? [a]\n: b\n',
    '? !!set {a}\n: b\n',
    '? !!omap [a: 1]\n: b\n',
    'a: 0b_\n',  # ValueErrors, made errors of the document
    'a: 0x_\n',
    'a: !!int x\n',
    'a: !!float x\n',
    'a: 2001-13-45\n',
    'a: !!timestamp x\n',
    '? 0b_\n: key\n',
    'a: !!binary "a"\n',
    'a: ' + '9' * 4301 + '\n',
    '? ' + '9' * 4301 + '\n: key\n',
    'a: =\n',  # no constructor for the tags of `=` and `<<` as values
    'a: <<\n',
    '<<: 1\n',
    '<<: [1]\n',
    'a: !foo bar\n',
    'a: !!python/object:os.system x\n',
    'a: !!str {b: 1}\n',
    'a: !!map [1]\n',
    'a: !!seq {b: 1}\n',
    'a: !!omap [1]\n',
    'a: !!omap {b: 1}\n',
    'a: !!pairs [[1]]\n',
    'a: !!set [1]\n',
    'a: !!null [1]\n',
    '? !!str [1]\n: b\n',
    'a: !!bool maybe\n',  # a KeyError in SafeConstructor itself (and an AttributeError from `!!timestamp x`)
    '? !!bool maybe\n: b\n',
]


def typed(data: object) -> object:
    """`data` with the type of every value in it, and its order: `True` is not `1`, nor `1.0`, nor a date a datetime."""
    if isinstance(data, dict):
        return (dict, [(typed(k), typed(v)) for k, v in data.items()])
    if isinstance(data, (list, tuple)):
        return (type(data), [typed(item) for item in data])
    if isinstance(data, set):
        return (set, frozenset(typed(item) for item in data))  # type: ignore[arg-type]
    return (type(data), repr(data))  # repr: nan is nan, and a datetime's time zone shows


def _lines_by_path(data: object, lines: dict[int, list[int]], path: str = '') -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    if isinstance(data, list):
        found[path] = lines.get(id(data), [])
    children: Any = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, child in children:
        found |= _lines_by_path(child, lines, f'{path}/{key!r}')
    return found


def _outcome(loader: Any, text: str) -> tuple[object, ...]:
    """What a loader makes of `text`: its data with types and item lines, or its error as a user would see it."""
    try:
        data, lines = files._parse_yaml(loader, text)
    except Exception as e:
        marks = [getattr(e, name, None) for name in ('context_mark', 'problem_mark')]
        where = [(m.line, m.column) if m is not None else None for m in marks]
        return 'error', type(e), getattr(e, 'context', None), getattr(e, 'problem', None) or str(e), where
    return 'data', typed(data), _lines_by_path(data, lines)


def _load_error(path: Path) -> tuple[object, ...]:
    """The error `load_dataset` raises: a FileError, whatever PyYAML raised."""
    try:
        load_dataset(path)
    except FileError as e:
        return type(e), str(e), getattr(e, 'line', None)
    pytest.fail(f'{path} loaded')


def test_the_tables_have_what_they_say() -> None:
    assert all(_outcome(files._Loader, text)[0] == 'error' for text in BAD)
    assert '*' not in ''.join(STRUCTURES + BAD)  # no aliases: each document is one the composing loader gets
    assert all(files._loader_for(text) is files._ComposingLoader for text in STRUCTURES + BAD)


@pytest.mark.parametrize('text', STRUCTURES)
def test_the_same_values_and_types_as_safe_load(text: str) -> None:
    fast = _outcome(files._ComposingLoader, text)
    assert fast[:2] == ('data', typed(files.yaml.safe_load(text)))
    assert fast == _outcome(files._Loader, text)  # and the same item lines as the pure loader's


@pytest.mark.parametrize('text', BAD)
def test_the_same_error_as_the_pure_loader(text: str) -> None:
    assert _outcome(files._ComposingLoader, text) == _outcome(files._Loader, text)


@pytest.mark.parametrize('text', BAD)
def test_a_bad_dataset_is_the_same_error_with_or_without_libyaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    path = tmp_path / 'd.yaml'
    path.write_text(
        f'name: x\ncases:\n- name: a\n  inputs:\n    {text.replace(chr(10), chr(10) + "    ")}\n', encoding='utf-8'
    )
    fast = _load_error(path)
    monkeypatch.setattr(files, '_FastLoader', None)
    monkeypatch.setattr(files, '_ComposingLoader', None)
    assert fast == _load_error(path)


def test_plain_nodes_are_not_constructed_by_safe_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of `construct_plain`: only what is not a string, null, boolean, mapping or list takes the long way."""
    constructed: list[str] = []
    construct = files._ComposingLoader.construct_document

    def spy(self: Any, node: Any) -> Any:
        constructed.append(node.value if isinstance(node.value, str) else node.tag)
        return construct(self, node)

    monkeypatch.setattr(files._ComposingLoader, 'construct_document', spy)
    text = 'a: [x, "1", ~, yes, {b: c, ~: d, no: e}, [[]]]\nf: 1.5\ng: {<<: {h: i}}\n2: !!bool maybe?\n'
    with pytest.raises(files.yaml.constructor.ConstructorError, match=r"'maybe\?' is not a bool"):
        files._parse_yaml(files._ComposingLoader, text)
    assert constructed == ['1.5', 'tag:yaml.org,2002:map', '2', 'maybe?']
    constructed.clear()
    data, _ = files._parse_yaml(files._ComposingLoader, text.replace(' maybe?', ' off'))
    assert data == {
        'a': ['x', '1', None, True, {'b': 'c', None: 'd', False: 'e'}, [[]]],
        'f': 1.5,
        'g': {'h': 'i'},
        2: False,
    }
    assert constructed == ['1.5', 'tag:yaml.org,2002:map', '2']


@pytest.mark.parametrize(
    ('value', 'message'), [('!!bool maybe', "'maybe' is not a bool"), ('!!timestamp x', "'x' is not a timestamp")]
)
def test_a_value_its_tag_cannot_read_is_one_line_naming_it(tmp_path: Path, value: str, message: str) -> None:
    """PyYAML raises a bare KeyError or AttributeError for these: a traceback, not an answer."""
    path = tmp_path / 'd.yaml'
    path.write_text(f'name: x\ncases:\n- name: a\n  inputs: {value}\n', encoding='utf-8')
    with pytest.raises(FileError) as raised:
        load_dataset(path)
    assert str(raised.value) == f'{path}:4: invalid YAML: {message}'
