"""Real-browser tests: HTML files opened in Debian's chromium, driven by Playwright (sync API).

A test asks for `open_report` and calls it with a local file; it gets a Playwright `Page`:

    def test_summary(open_report, tmp_path):
        page = open_report(tmp_path / 'report.html')
        assert 'cases' in page.inner_text('#summary')

`open_report.html(text)` writes the text to the test's temporary directory and opens it.

Every page opened that way

- may load only local resources: a request for anything but `file:`, `data:`, `about:` or
  `blob:` is aborted and recorded, and so is a WebSocket (DNS is off in the browser as well, so
  nothing leaves the machine even past the route), because a self-contained report makes none;
- has its console messages and uncaught errors collected;
- is screenshotted (full page) at teardown into `test-artifacts/screenshots/<module>-<test name>.png`
  (`<module>-<test name>-2.png` for a second page; the module's file name without `.py`, so tests of
  the same name in two modules keep both); `open_report.screenshot('name')` adds
  `<module>-<test name>-name.png` at any point.

At teardown the test fails (an error at teardown) when any console error, page error, crash or
network request was recorded. A test that provokes one on purpose takes it with
`open_report.take_problems()`, which returns the problems and forgets them.

Playwright never downloads a browser here: it launches the chromium found at
`$AGENTIC_EVALS_CHROMIUM` or on `PATH` (`make browser` installs Debian's). When there is none the
tests fail, saying so, because CI must really run them; `AGENTIC_EVALS_SKIP_BROWSER=1` skips them
instead, for a developer without a browser.

`chromium_browser` is the session's Playwright `Browser` itself, for a test that needs its own
context. While a browser test runs, Playwright's event loop is the thread's running loop (its sync
API wants it so), so such a test cannot `asyncio.run()`; the fixtures unset it between tests.

A test that uses these fixtures is marked `browser` and `slow` (`mark_browser_tests`, called from
the conftest), so `make test-fast` (`-m "not slow"`) leaves it out and `-m browser` selects it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Error, Page, Playwright, Route, WebSocket

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / 'test-artifacts' / 'screenshots'
CHROMIUM_ENV = 'AGENTIC_EVALS_CHROMIUM'
SKIP_ENV = 'AGENTIC_EVALS_SKIP_BROWSER'
LOCAL_SCHEMES = ('file:', 'data:', 'about:', 'blob:')
"""What a page may load; `blob:` URLs are made in the page from its own data (a download link, say)."""
ERROR_TYPES = ('error', 'assert')
"""Console message types that fail a test: `console.error` and a failed `console.assert`."""
LAUNCH_ARGS = (
    # The sandbox cannot start as root (CI) or in most containers; the pages are our own local files.
    '--no-sandbox',
    # Belt and braces behind the route: no host name resolves, so not even a WebSocket or a DNS
    # prefetch (which no route sees) reaches the network.
    '--host-resolver-rules=MAP * ~NOTFOUND',
)
FIXTURES = frozenset({'_chromium_session', 'chromium_browser', 'open_report'})
"""A test using any of these is a browser test."""
SCREENSHOT_TIMEOUT_MS = 60_000
WaitUntil = Literal['commit', 'domcontentloaded', 'load', 'networkidle']


def chromium_executable() -> str | None:
    """The chromium to launch: `$AGENTIC_EVALS_CHROMIUM`, else `chromium` on `PATH`."""
    configured = os.environ.get(CHROMIUM_ENV)
    if configured:
        return configured if Path(configured).is_file() else None
    return shutil.which('chromium') or shutil.which('chromium-browser')


def mark_browser_tests(items: Iterable[pytest.Item]) -> None:
    """Mark every test that uses a browser fixture `browser` and `slow`: call it from `pytest_collection_modifyitems`."""
    for item in items:
        if FIXTURES.intersection(getattr(item, 'fixturenames', ())):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)


def assert_no_problems(problems: list[str]) -> None:
    """Fail naming every problem a browser recorded (what `open_report` does at teardown)."""
    if problems:
        lines = '\n'.join(f'  {p}' for p in problems)
        pytest.fail(f'the browser recorded {len(problems)} problem(s):\n{lines}', pytrace=False)


@dataclass
class ConsoleEntry:
    type: str
    text: str
    location: str

    def __str__(self) -> str:
        return f'console {self.type}: {self.text} ({self.location})'


@dataclass
class _Watched:
    """One page and what it recorded, in the order it happened."""

    page: Page
    console: list[ConsoleEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class ReportOpener:
    """The `open_report` fixture: opens local HTML files in one browser context and watches them."""

    def __init__(self, browser: Browser, name: str, html_dir: Path | None = None) -> None:
        self._browser = browser
        self.name = name
        """The test's module and name (`<module>-<test name>`) made safe for a file name: screenshots are
        named after it."""
        self._html_dir = html_dir
        self._context: BrowserContext | None = None
        self._pages: list[_Watched] = []
        self.network_requests: list[str] = []
        """Every request for something not local (`METHOD url`), all aborted."""

    def __call__(self, path: str | Path, *, wait_until: WaitUntil = 'load') -> Page:
        """Open `path` (a local file) in a new page and wait for its `load` event (or `wait_until`)."""
        page = self.new_page()
        page.goto(Path(path).resolve().as_uri(), wait_until=wait_until)
        return page

    def html(self, text: str, *, file_name: str | None = None, wait_until: WaitUntil = 'load') -> Page:
        """Write `text` to a file in the test's temporary directory and open it."""
        if self._html_dir is None:
            raise RuntimeError('this opener has no directory for HTML text; pass html_dir')
        if file_name is None:
            file_name = next(n for i in count(1) if not (self._html_dir / (n := f'page-{i}.html')).exists())
        path = self._html_dir / file_name
        path.write_text(text, encoding='utf-8')
        return self(path, wait_until=wait_until)

    def new_page(self) -> Page:
        """A blank watched page, for a test that navigates itself."""
        if self._context is None:
            self._context = self._browser.new_context()
            self._context.route('**/*', self._route)
        page = self._context.new_page()
        watched = _Watched(page)
        page.on('console', lambda message: self._on_console(watched, message))
        page.on('pageerror', lambda error: watched.problems.append(f'page error: {_error_text(error)}'))
        page.on('crash', lambda _: watched.problems.append('page crashed'))
        page.on('websocket', self._on_websocket)
        self._pages.append(watched)
        return page

    @property
    def page(self) -> Page:
        """The page opened last."""
        if not self._pages:
            raise RuntimeError('no page has been opened yet')
        return self._pages[-1].page

    def console(self, page: Page | None = None) -> list[ConsoleEntry]:
        """Every console message of `page` (default: the last one opened), any type."""
        self._flush()
        return list(self._watched(page).console)

    def problems(self) -> list[str]:
        """Console errors, page errors, crashes and network requests recorded so far, on every page."""
        self._flush()
        return [
            *(p for w in self._pages for p in w.problems),
            *(f'network request: {r}' for r in self.network_requests),
        ]

    def take_problems(self) -> list[str]:
        """`problems()`, then forget them: for a test that causes them on purpose."""
        problems = self.problems()
        for watched in self._pages:
            watched.problems.clear()
        self.network_requests.clear()
        return problems

    def screenshot(self, name: str, page: Page | None = None) -> Path:
        """A full-page screenshot of `page` (default: the last opened) at `<test name>-<name>.png`."""
        return self._screenshot(self._watched(page).page, f'{self.name}-{_safe(name)}')

    def close(self) -> list[str]:
        """Screenshot every open page, close the context and return the problems (the teardown)."""
        failures = []
        for index, watched in enumerate(self._pages):
            if watched.page.is_closed():
                continue
            try:
                self._screenshot(watched.page, self.name if index == 0 else f'{self.name}-{index + 1}')
            except Exception as error:  # a crashed page: the crash is the problem to report
                failures.append(f'screenshot failed: {_first_line(str(error))}')
        problems = [*self.problems(), *failures]
        if self._context is not None:
            self._context.close()
            self._context = None
        return problems

    def _watched(self, page: Page | None) -> _Watched:
        if page is None:
            if not self._pages:
                raise RuntimeError('no page has been opened yet')
            return self._pages[-1]
        return next(w for w in self._pages if w.page is page)

    def _screenshot(self, page: Page, stem: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f'{stem}.png'
        page.screenshot(path=str(path), full_page=True, timeout=SCREENSHOT_TIMEOUT_MS)
        return path

    def _flush(self) -> None:
        """One round trip per open page, so events the browser already sent have been handled."""
        for watched in self._pages:
            if not watched.page.is_closed():
                with contextlib.suppress(Exception):  # a crashed or navigating page: its events are in already
                    watched.page.evaluate('0')

    def _route(self, route: Route) -> None:
        request = route.request
        if request.url.startswith(LOCAL_SCHEMES):
            route.continue_()
        else:
            self.network_requests.append(f'{request.method} {request.url}')
            route.abort()

    def _on_console(self, watched: _Watched, message: ConsoleMessage) -> None:
        location = message.location
        line, column = location.get('lineNumber', 0), location.get('columnNumber', 0)
        where = location.get('url') or '?'
        if line or column:  # zero-based; both zero for a message about a resource, which has no line
            where = f'{where}:{line + 1}'
        entry = ConsoleEntry(message.type, message.text, where)
        watched.console.append(entry)
        if entry.type in ERROR_TYPES:
            watched.problems.append(str(entry))

    def _on_websocket(self, socket: WebSocket) -> None:
        self.network_requests.append(f'WebSocket {socket.url}')


def _error_text(error: Error) -> str:
    return error.stack or f'{error.name}: {error.message}'


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def screenshot_stem(nodeid: str, name: str) -> str:
    """`<module>-<test name>` made safe for a file name, from a test's node id and name:
    `tests/reports/test_html_browser.py::test_many[10000]` gives `test_html_browser-test_many_10000`."""
    module = Path(nodeid.split('::', 1)[0]).stem
    return _safe(f'{module}-{name}')


def _safe(name: str) -> str:
    return re.sub(r'[^\w.-]+', '_', name).strip('_') or 'test'


class _Session:
    """The session's Playwright and browser, and Playwright's event loop (see `_loop_released`)."""

    def __init__(self, playwright: Playwright, browser: Browser, loop: asyncio.AbstractEventLoop | None) -> None:
        self.playwright = playwright
        self.browser = browser
        self.loop = loop


@contextlib.contextmanager
def _loop_set(loop: asyncio.AbstractEventLoop | None) -> Iterator[None]:
    """Playwright's loop as the thread's running loop inside the block, whatever was there before after it.

    The sync API runs its event loop in a greenlet and leaves it set as the running loop after every
    call, so `asyncio.run()` in any later test would fail ("cannot be called from a running event
    loop"). The loop only runs inside a Playwright call, so it is set while a browser test runs and
    unset between tests.
    """
    previous = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(loop)
    try:
        yield
    finally:
        asyncio.events._set_running_loop(previous)


@pytest.fixture(scope='session')
def _chromium_session() -> Iterator[_Session]:
    if os.environ.get(SKIP_ENV) == '1':
        pytest.skip(f'{SKIP_ENV}=1: browser tests skipped')
    executable = chromium_executable()
    if executable is None:
        configured = os.environ.get(CHROMIUM_ENV)
        found = f'${CHROMIUM_ENV} ({configured}) is not a file' if configured else 'no chromium on PATH'
        pytest.fail(
            f'{found}: run `make browser` to install Debian chromium, point ${CHROMIUM_ENV} at a chromium, '
            f'or set {SKIP_ENV}=1 to skip the browser tests',
            pytrace=False,
        )
    os.environ.setdefault('PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD', '1')
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright is not installed: pip install -e '.[dev]' (or `make install`)", pytrace=False)
    previous = asyncio.events._get_running_loop()
    playwright = sync_playwright().start()
    loop = asyncio.events._get_running_loop()
    try:
        try:
            browser = playwright.chromium.launch(executable_path=executable, headless=True, args=list(LAUNCH_ARGS))
        except Exception as error:
            playwright.stop()
            pytest.fail(f'chromium at {executable} did not start: {error}', pytrace=False)
    finally:
        asyncio.events._set_running_loop(previous)
    session = _Session(playwright, browser, loop)
    yield session
    with _loop_set(session.loop):
        browser.close()
        playwright.stop()


@pytest.fixture
def chromium_browser(_chromium_session: _Session) -> Iterator[Browser]:
    """Headless Debian chromium, launched once per session by Playwright (never a downloaded browser)."""
    with _loop_set(_chromium_session.loop):
        yield _chromium_session.browser


@pytest.fixture
def open_report(chromium_browser: Browser, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ReportOpener]:
    """Open local HTML in the browser; fails the test at teardown on any console error or network request."""
    opener = ReportOpener(chromium_browser, screenshot_stem(request.node.nodeid, request.node.name), html_dir=tmp_path)
    yield opener
    assert_no_problems(opener.close())
