from __future__ import annotations

import pytest

from tests.browser import _chromium_session, chromium_browser, mark_browser_tests, open_report

__all__ = ['_chromium_session', 'chromium_browser', 'open_report']


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Before `-m` deselects: a test using the browser fixtures is `browser` and `slow`.
    mark_browser_tests(items)
