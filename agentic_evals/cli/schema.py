"""`agentic-evals-otel schema`: the JSON Schema of the JSON report (`agentic-evals/report@1`), to validate reports with.

There is one copy to maintain, `docs/schema/report-1.schema.json` (which `reports/schema.py` writes from
the report's types): the wheel ships it as `agentic_evals/report-1.schema.json` (pyproject.toml maps it
there). A source checkout or an editable install has no such file and reads the docs copy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_PASS

SCHEMA_FILE = 'report-1.schema.json'


def add_parser(commands: Any) -> None:
    schema = commands.add_parser(
        'schema',
        help='print the JSON Schema of the JSON report (run --json)',
        description=(
            'Print the JSON Schema (draft 2020-12) of the reports `run --json` writes and `compare` and `render`'
            ' read (agentic-evals/report@1), as shipped in the package: validate a report with any JSON Schema'
            ' validator, or generate a reader from it.'
        ),
        epilog='exit status: 0 printed, 2 stdout cannot be written, 3 internal error (a bug), 130 interrupted',
    )
    schema.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    sys.stdout.write(schema_text())
    return EXIT_PASS


def schema_text() -> str:
    """The shipped schema, or in a source tree the docs copy it is built from."""
    from importlib import resources

    shipped = resources.files('agentic_evals') / SCHEMA_FILE
    if shipped.is_file():
        return shipped.read_text(encoding='utf-8')
    return (Path(__file__).resolve().parents[2] / 'docs' / 'schema' / SCHEMA_FILE).read_text(encoding='utf-8')
