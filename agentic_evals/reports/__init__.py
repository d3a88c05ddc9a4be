"""Reports of a scoring run: the versioned JSON document, gates, JUnit XML, Markdown, terminal, compare.

Every writer reads the `ReportDocument` (built once from a pydantic-evals `EvaluationReport`), so
the JSON on disk, the CI views and the exit status all say the same thing.
"""

from .compare import AverageChange, CaseChange, Comparison, compare_documents
from .document import SCHEMA, ReportDocument, ReportFileError, document_from_report, read_document, write_document
from .gates import GateResult, Gates, MinScore, UnknownResultError, Verdict, check_gates
from .junit import render_junit
from .markdown import render_markdown

__all__ = (
    'SCHEMA',
    'AverageChange',
    'CaseChange',
    'Comparison',
    'GateResult',
    'Gates',
    'MinScore',
    'ReportDocument',
    'ReportFileError',
    'UnknownResultError',
    'Verdict',
    'check_gates',
    'compare_documents',
    'document_from_report',
    'read_document',
    'render_junit',
    'render_markdown',
    'write_document',
)
