from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Timing belongs in benchmarks/: on a loaded machine one example may take longer than Hypothesis' default
# 200 ms deadline without anything being wrong, so no property test has a deadline.
settings.register_profile('agentic_evals', deadline=None)
settings.load_profile('agentic_evals')

# The scripted scenario lives with the fixtures it generates; tests import it from there.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'fixtures'))


# Each Ray test file starts a local cluster the size of the machine; under pytest-xdist they share a worker,
# so one cluster runs at a time.
SERIAL_GROUPS = {'test_ray.py': 'ray', 'test_ray_gcs.py': 'ray'}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under `-n`, keep each file in one worker (module fixtures start once) and the Ray files in one."""
    for item in items:
        group = SERIAL_GROUPS.get(item.path.name, str(item.path))
        item.add_marker(pytest.mark.xdist_group(group))
