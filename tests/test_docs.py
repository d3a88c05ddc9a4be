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

Run one page by hand with `python tests/test_docs.py docs/PAGE.md`.
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


if __name__ == '__main__':
    sys.exit(run_page(Path(sys.argv[1]).resolve()))
