"""The wheel as the package index and a user get it: complete metadata, a long description whose links work
on the index, and the report schema, equal to the committed one and printed by `agentic-evals-otel schema`.

The wheel is built offline with the build backend (hatchling and its readme hook, dev dependencies).
"""

from __future__ import annotations

import email
import os
import subprocess
import sys
import zipfile
from email.message import Message
from pathlib import Path

import pytest

from .test_docs import links

# Each test starts a Python interpreter: left out of `make test-fast`.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / 'docs' / 'schema' / 'report-1.schema.json'
URLS = {'Homepage', 'Documentation', 'Source', 'Issues', 'Changelog'}


@pytest.fixture(scope='module')
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp('wheel')
    build = 'import sys, hatchling.build as backend; print(backend.build_wheel(sys.argv[1]))'
    done = subprocess.run(
        [sys.executable, '-c', build, str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return out / done.stdout.split()[-1]


@pytest.fixture(scope='module')
def metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        [name] = [name for name in archive.namelist() if name.endswith('.dist-info/METADATA')]
        return email.message_from_bytes(archive.read(name))


def _urls(metadata: Message) -> dict[str, str]:
    return dict(entry.split(', ', 1) for entry in metadata.get_all('Project-URL', []))


def test_the_project_urls_lead_to_the_repository(metadata: Message) -> None:
    urls = _urls(metadata)
    assert set(urls) == URLS
    source = urls['Source']
    assert source.startswith('https://github.com/')
    assert all(url.startswith(source) for url in urls.values())
    assert urls['Documentation'] == f'{source}/blob/main/docs/index.md'


def test_the_classifiers_say_what_the_package_is(metadata: Message) -> None:
    classifiers = set(metadata.get_all('Classifier', []))
    # hatchling refuses a classifier that is not in the official list, so these are all valid ones
    assert {
        'Programming Language :: Python :: 3 :: Only',
        'Programming Language :: Python :: 3.10',
        'Framework :: OpenTelemetry',
        'Typing :: Typed',
    } <= classifiers
    assert any(c.startswith('Development Status :: ') for c in classifiers)
    assert any(c.startswith('Topic :: ') for c in classifiers)
    assert metadata['Requires-Python'] == '>=3.10'
    assert metadata['License-Expression'] == 'MIT'


def test_the_long_description_is_the_readme_with_links_that_work_on_the_index(metadata: Message) -> None:
    assert metadata['Description-Content-Type'] == 'text/markdown'
    description = metadata.get_payload()
    assert isinstance(description, str)
    readme = (ROOT / 'README.md').read_text(encoding='utf-8')
    assert description.startswith(readme.splitlines()[0])
    relative = [(line, target) for line, target in links(description) if '://' not in target]
    assert relative == []
    blob = f'{_urls(metadata)["Source"]}/blob/main/'
    readme_links = [target for _, target in links(readme)]
    assert 'docs/index.md' in readme_links
    assert [target.removeprefix(blob) for _, target in links(description)] == readme_links
    # in the repository the README keeps relative links: they work on GitHub and in a checkout
    assert not any(target.startswith(blob) for target in readme_links)


def test_the_wheel_ships_the_committed_report_schema(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read('agentic_evals/report-1.schema.json') == SCHEMA.read_bytes()


def test_the_schema_command_prints_the_shipped_schema_when_installed(wheel: Path, tmp_path: Path) -> None:
    installed = tmp_path / 'site'
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(installed)
    # No docs/ beside this copy of the package: only the shipped file can be read.
    assert not (tmp_path / 'docs').exists()
    env = {**os.environ, 'PYTHONPATH': str(installed)}
    show = 'import agentic_evals, sys; print(agentic_evals.__file__); sys.exit(agentic_evals.cli.main(["schema"]))'
    done = subprocess.run(
        [sys.executable, '-c', f'import agentic_evals.cli; {show}'],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    where, schema = done.stdout.split('\n', 1)
    assert Path(where).is_relative_to(installed)
    assert schema == SCHEMA.read_text(encoding='utf-8')
