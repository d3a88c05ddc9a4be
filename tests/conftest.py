from __future__ import annotations

import sys
from pathlib import Path

# The scripted scenario lives with the fixtures it generates; tests import it from there.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'fixtures'))
