"""Run the code examples in docs/*.md.

Each page runs in a fresh interpreter (examples install a global tracer provider, which must not
leak into other pages or tests). Within a page, the ```python blocks run in order in one namespace,
so a block can use names defined by the blocks above it. A block fails when it raises, or when what
it prints differs from its `# >` comment lines: one `# >` line per printed line, in order. (ruff's
formatter, which also formats the code in the docs, would rewrite `#>` to `# >`.)

A block whose fence line contains `test="skip"` is shown but not run; one with
`requires="DIST>=X.Y.Z"` runs only when that distribution is installed at that version or later
(the suite also runs against the oldest supported releases). A block with `title="NAME"`
in its fence line (a YAML file, say) is written to NAME in the working directory when the page
reaches it, so later examples can read it.

Run one page by hand with `python tests/test_docs.py docs/PAGE.md`. Running the pages takes
seconds each (a fresh interpreter per page), so those tests are marked `slow`.

Every relative link in the pages must lead to a file in the repository, and a `#fragment` to a
heading of the page it names.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / 'docs'
PAGE_TIMEOUT = 60

_FENCE = re.compile(r'^```(?P<lang>[\w-]*)(?P<info>.*)$')
_TITLE = re.compile(r'title="(?P<title>[^"]+)"')
_REQUIRES = re.compile(r'requires="(?P<dist>[\w.-]+)>=(?P<version>[\d.]+)"')


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r'\d+', text)[:3])


@dataclass
class Block:
    lang: str
    info: str
    line: int
    """1-based line number of the block's first code line."""
    code: str

    @property
    def skip(self) -> bool:
        if 'test="skip"' in self.info:
            return True
        requires = _REQUIRES.search(self.info)
        if requires is None:
            return False
        from importlib.metadata import version

        return _release(version(requires['dist'])) < _release(requires['version'])

    @property
    def title(self) -> str | None:
        match = _TITLE.search(self.info)
        return match['title'] if match else None


def parse_blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown page, in order."""
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match is None or not match['lang']:
            index += 1
            continue
        start = index + 1
        end = start
        while end < len(lines) and lines[end].rstrip() != '```':
            end += 1
        if end == len(lines):
            raise ValueError(f'unclosed ``` block at line {index + 1}')
        blocks.append(Block(match['lang'], match['info'], start + 1, '\n'.join(lines[start:end]) + '\n'))
        index = end + 1
    return blocks


def run_page(path: Path) -> int:
    """Run the page's blocks in one namespace; print what failed to stderr and return an exit code."""
    blocks = parse_blocks(path.read_text(encoding='utf-8'))
    namespace: dict[str, object] = {'__name__': '__main__'}
    for block in blocks:
        if block.skip:
            continue
        if block.title is not None:
            Path(block.title).write_text(block.code, encoding='utf-8')
            continue
        if block.lang != 'python':
            continue
        where = f'{path.name}:{block.line}'
        # Pad with blank lines so tracebacks point at the line in the Markdown file.
        code = compile('\n' * (block.line - 1) + block.code, str(path), 'exec')
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(code, namespace)
        except BaseException:
            print(f'block at {where} raised:', file=sys.stderr)
            traceback.print_exc()
            print(f'output so far:\n{out.getvalue()}', file=sys.stderr)
            return 1
        printed = [line.rstrip() for line in out.getvalue().splitlines()]
        expected = [line.rstrip() for line in _expected_output(block.code)]
        if printed != expected:
            print(
                f'block at {where} printed:', *printed, 'but its # > lines say:', *expected, sep='\n', file=sys.stderr
            )
            return 1
    return 0


def _expected_output(code: str) -> list[str]:
    expected: list[str] = []
    for line in code.splitlines():
        stripped = line.strip()
        if stripped == '# >':
            expected.append('')
        elif stripped.startswith('# > '):
            expected.append(stripped[4:])
    return expected


def _pages() -> list[Path]:
    return [*sorted(DOCS.glob('*.md')), ROOT / 'README.md']


def _pages_with_examples() -> list[Path]:
    return [p for p in _pages() if any(b.lang == 'python' for b in parse_blocks(p.read_text(encoding='utf-8')))]


def test_docs_exist() -> None:
    names = {p.name for p in _pages()}
    assert {'index.md', 'getting-started.md', 'evaluators.md', 'capture.md'} <= names


@pytest.mark.slow
@pytest.mark.parametrize('page', _pages_with_examples(), ids=lambda p: p.name)
def test_page_examples(page: Path, tmp_path: Path) -> None:
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')]))}
    proc = subprocess.run(
        [sys.executable, __file__, str(page)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=PAGE_TIMEOUT,
    )
    assert proc.returncode == 0, f'{page.name}:\n{proc.stderr}'


def test_parse_blocks() -> None:
    text = '# T\n\n```python\nx = 1\n# > 1\n```\n\n```python {test="skip"}\nboom\n```\n\n```yaml title="a.yaml"\nk: v\n```\n'
    blocks = parse_blocks(text)
    assert [(b.lang, b.line, b.skip, b.title) for b in blocks] == [
        ('python', 4, False, None),
        ('python', 9, True, None),
        ('yaml', 13, False, 'a.yaml'),
    ]
    assert _expected_output(blocks[0].code) == ['1']


@pytest.mark.parametrize(
    ('code', 'passes'),
    [
        ('print(1 + 1)\n# > 2\n', True),
        ('print(1 + 1)\n# > 3\n', False),
        ('print(1 + 1)\n', False),
        ('assert 1 + 1 == 3\n', False),
    ],
)
def test_run_page_fails_on_wrong_output_or_error(code: str, passes: bool, tmp_path: Path) -> None:
    page = tmp_path / 'page.md'
    page.write_text(f'```python\n{code}```\n', encoding='utf-8')
    assert (run_page(page) == 0) is passes


_LINK = re.compile(r'!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+"[^"]*")?\)|^\[[^\]]+\]:\s*(?P<ref>\S+)', re.MULTILINE)
_CODE_SPAN = re.compile(r'(`+)(.+?)\1')
_CODE_PATH = re.compile(r'^\.\.?/[\w./-]+$')
_SCHEME = re.compile(r'^[a-z][a-z0-9+.-]*:', re.IGNORECASE)


def _prose(text: str, *, inline_code: bool = False) -> str:
    """`text` without its fenced blocks (blank lines keep the line numbers), and its inline code unless asked."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence is None and stripped.startswith(('```', '~~~')):
            fence = stripped[:3]
            kept.append('')
        elif fence is not None:
            if stripped.startswith(fence):
                fence = None
            kept.append('')
        else:
            kept.append(line if inline_code else _CODE_SPAN.sub('code', line))
    return '\n'.join(kept)


def links(text: str) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link and reference definition outside code, in order.

    A relative path written as inline code (`` `../x.md` ``, starting `./` or `../`) counts too:
    it tells the reader where to look just as a link does.
    """
    prose, with_code = _prose(text), _prose(text, inline_code=True)
    found = [(prose.count('\n', 0, m.start()) + 1, m['target'] or m['ref']) for m in _LINK.finditer(prose)]
    found += [
        (with_code.count('\n', 0, m.start()) + 1, m[2])
        for m in _CODE_SPAN.finditer(with_code)
        if _CODE_PATH.match(m[2])
    ]
    return sorted(found, key=lambda link: link[0])


def anchors(text: str) -> set[str]:
    """The fragments GitHub gives the page's headings: lower case, punctuation dropped, spaces as `-`."""
    seen: dict[str, int] = {}
    for line in _prose(text, inline_code=True).replace('`', '').splitlines():
        heading = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if heading is None:
            continue
        slug = re.sub(r'[^\w\- ]', '', heading[1].strip().lower()).replace(' ', '-')
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f'{slug}-{count}'] = 1
    return set(seen)


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Every relative link of `page` that leads nowhere in `root`, or to a heading that is not there."""
    text = page.read_text(encoding='utf-8')
    broken: list[str] = []
    for line, target in links(text):
        if _SCHEME.match(target):
            continue
        path, _, fragment = target.partition('#')
        resolved = (page.parent / path).resolve() if path else page
        where = f'{page.relative_to(root).as_posix()}:{line}: {target}'
        if not resolved.is_relative_to(root):
            broken.append(f'{where} (outside the repository)')
        elif not resolved.exists():
            broken.append(f'{where} (no such file)')
        elif fragment and resolved.suffix == '.md' and fragment not in anchors(resolved.read_text(encoding='utf-8')):
            broken.append(f'{where} (no such heading)')
    return broken


@pytest.mark.parametrize('page', _pages(), ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


def test_the_link_check_sees_broken_links(tmp_path: Path) -> None:
    text = '[a](x.md) `[b](not-a-link.md)` ![c](img.png "t") `../up.md`\n```\n[d](code.md)\n```\n[e]: ref.md\n'
    assert links(text) == [(1, 'x.md'), (1, 'img.png'), (1, '../up.md'), (5, 'ref.md')]
    assert anchors('# Title\n## `run`: score traces\n## Title\n```\n# not a heading\n```\n') == {
        'title',
        'run-score-traces',
        'title-1',
    }
    docs = tmp_path / 'docs'
    docs.mkdir()
    (docs / 'other.md').write_text('# Other\n', encoding='utf-8')
    page = docs / 'page.md'
    page.write_text(
        '# Page\n[ok](other.md#other) [self](#page) [web](https://example.com/x.md)\n'
        '[out](../../outside.md) [gone](missing.md) [heading](other.md#nope) [here](#nope)\n',
        encoding='utf-8',
    )
    assert broken_links(page, tmp_path) == [
        'docs/page.md:3: ../../outside.md (outside the repository)',
        'docs/page.md:3: missing.md (no such file)',
        'docs/page.md:3: other.md#nope (no such heading)',
        'docs/page.md:3: #nope (no such heading)',
    ]


_BULLET = re.compile(r'^(?P<indent> *)- (?P<text>.*)$')
_PY_NAME = re.compile(r'`(\w+\.py)`')


def documented_modules(text: str) -> set[str]:
    """The modules the "Module by module" list of docs/architecture.md names, as paths in the package.

    A top-level bullet naming a `package/` sets the package for the bullets nested under it; a
    nested bullet naming `sub/` first is a sub-package. Every `name.py` in a bullet (with its
    continuation lines) is a module of that bullet's package.
    """
    section = text.split('### Module by module', 1)[1].split('\n## ', 1)[0]
    bullets: list[tuple[int, str]] = []
    for line in section.splitlines():
        bullet = _BULLET.match(line)
        if bullet is not None:
            bullets.append((len(bullet['indent']), bullet['text']))
        elif bullets and line.startswith(' '):
            bullets[-1] = (bullets[-1][0], f'{bullets[-1][1]} {line.strip()}')
    found: set[str] = set()
    package = ''
    for indent, bullet_text in bullets:
        head = re.match(r'`(\w+)/`', bullet_text)
        if indent == 0:
            package = f'{head[1]}/' if head else ''
        prefix = package + (f'{head[1]}/' if head and indent else '')
        found |= {prefix + name for name in _PY_NAME.findall(bullet_text)}
    return found


def test_the_architecture_page_names_every_module() -> None:
    package = ROOT / 'agentic_evals'
    modules = {p.relative_to(package).as_posix() for p in package.rglob('*.py')}
    documented = documented_modules((DOCS / 'architecture.md').read_text(encoding='utf-8'))
    undocumented = {m for m in modules - documented if not m.endswith('/__init__.py')}
    assert (sorted(undocumented), sorted(documented - modules)) == ([], [])


def test_documented_modules_reads_nested_lists() -> None:
    text = (
        '### Module by module\n\n- `errors.py`: x; `__main__.py`: y.\n- `pkg/`: `__init__.py` is z.\n'
        '  - `a.py`, `b.py`: one\n    line, and `c.py`.\n  - `sub/`: `d.py`.\n- `top.py`: w.\n\n## Next\n- `no.py`\n'
    )
    assert documented_modules(text) == {
        'errors.py',
        '__main__.py',
        'pkg/__init__.py',
        'pkg/a.py',
        'pkg/b.py',
        'pkg/c.py',
        'pkg/sub/d.py',
        'top.py',
    }


if __name__ == '__main__':
    sys.exit(run_page(Path(sys.argv[1]).resolve()))
