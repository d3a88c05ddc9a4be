"""The installed distribution is ours: `agentic-evals-otel` (`agentic-evals` on PyPI is another project)."""

from __future__ import annotations

import re
import subprocess
from importlib.metadata import distribution

import pytest

from agentic_evals.cli.common import DISTRIBUTION, PROG, package_version

from . import ROOT


def test_the_distribution_and_its_console_script_have_the_new_names() -> None:
    installed = distribution('agentic-evals-otel')
    assert installed.metadata['Name'] == 'agentic-evals-otel' == DISTRIBUTION
    scripts = {e.name: e.value for e in installed.entry_points if e.group == 'console_scripts'}
    assert scripts == {'agentic-evals-otel': 'agentic_evals.__main__:entry'}
    assert PROG == 'agentic-evals-otel'
    assert package_version() == installed.version


def test_pyproject_declares_them() -> None:
    tomllib = pytest.importorskip('tomllib')  # Python 3.11+
    project = tomllib.loads((ROOT / 'pyproject.toml').read_text(encoding='utf-8'))['project']
    assert project['name'] == 'agentic-evals-otel'
    assert project['scripts'] == {'agentic-evals-otel': 'agentic_evals.__main__:entry'}
    assert project['license'] == 'MIT'


def test_the_license_file_is_mit() -> None:
    text = (ROOT / 'LICENSE').read_text(encoding='utf-8')
    assert text.startswith('MIT License\n\nCopyright (c) 2026 the agentic_evals authors\n')
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_every_install_line_in_the_docs_names_the_distribution() -> None:
    pages = [ROOT / 'README.md', *(ROOT / 'docs').glob('*.md')]
    lines = [line for page in pages for line in page.read_text(encoding='utf-8').splitlines() if 'pip install' in line]
    assert lines
    for line in lines:
        assert 'agentic-evals-otel' in line or ('agentic_evals' not in line and 'agentic-evals' not in line), line


def test_every_command_line_in_the_repository_names_our_command() -> None:
    """The other project's command with one of our subcommands is a mistake: docs, comments and fixtures name ours.

    (The reports' titles, `agentic-evals compare: ...`, are names, not command lines.)
    """
    command = re.compile(r'\bagentic-evals (?:run|inspect|compare|render|schema)(?=[ `]|$)')
    tracked = subprocess.run(['git', 'ls-files'], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    suffixes = {'.py', '.md', '.yaml', '.yml', '.toml', '.cfg', '.txt', ''}
    found = []
    for name in tracked.splitlines():
        path = ROOT / name
        if path.suffix not in suffixes or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding='utf-8', errors='replace').splitlines(), 1):
            if command.search(line):
                found.append(f'{name}:{number}: {line.strip()}')
    assert found == []
