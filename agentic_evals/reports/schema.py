"""The JSON Schema of the report document (`agentic-evals/report@1`), generated from its types.

The committed copy, `docs/schema/report-1.schema.json`, is what users validate their files
against; `tests/reports/test_schema.py` fails when it and these types drift apart, and
`python -m agentic_evals.reports.schema` writes it again after a change to the types.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, TypeAdapter

from . import document, verdict
from .document import SCHEMA, ReportDocument

SCHEMA_ID = 'urn:agentic-evals-otel:schema:report:1'
"""A name, not a download location: the schema ships in the repository, not from a server."""
COMMITTED = Path(__file__).resolve().parents[2] / 'docs' / 'schema' / 'report-1.schema.json'
"""Where the published copy lives in the repository (not in an installed package)."""


def report_schema() -> dict[str, Any]:
    """The schema of what a report reader accepts, with each field's docstring as its description.

    pydantic reads field docstrings only when a class's config says so; the report types do not
    (reading source at import would slow every `run`), so the config is set for this call only.
    """
    types = list(
        dict.fromkeys(
            cls
            for module in (document, verdict)  # their own types, and those they hold
            for cls in vars(module).values()
            if isinstance(cls, type) and dataclasses.is_dataclass(cls)
        )
    )
    for cls in types:
        cls.__pydantic_config__ = ConfigDict(use_attribute_docstrings=True)  # type: ignore[attr-defined]
    try:
        schema = TypeAdapter(ReportDocument).json_schema()
    finally:
        for cls in types:
            del cls.__pydantic_config__  # type: ignore[attr-defined]
    # Class docstrings as descriptions, set here: pydantic releases differ on whether they add them.
    for cls in types:
        definition = schema['$defs'].get(cls.__name__)
        if definition is not None:
            definition.pop('description', None)
            doc = cls.__doc__
            if doc and not doc.startswith(f'{cls.__name__}('):  # not the signature dataclasses write
                definition['description'] = inspect.cleandoc(doc)
    # A reader refuses a document without `schema` (it is how a report is told from other JSON),
    # so the published schema requires it, though the type gives it a default for writers.
    schema['required'] = ['schema', *schema.get('required', [])]
    schema['properties']['schema'].pop('default', None)
    return {
        '$schema': 'https://json-schema.org/draft/2020-12/schema',
        '$id': SCHEMA_ID,
        **schema,
        'title': SCHEMA,
        'description': (
            'A report written by `agentic-evals-otel run --json` and read by `compare` and `render`. '
            '`averages` and `totals` are derived from `cases` and `failures`; readers recompute them. '
            'New optional fields keep the version; a change that breaks readers bumps it.'
        ),
    }


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2, sort_keys=True) + '\n'


if __name__ == '__main__':
    COMMITTED.write_text(schema_text(), encoding='utf-8')
    sys.stdout.write(f'wrote {COMMITTED}\n')
