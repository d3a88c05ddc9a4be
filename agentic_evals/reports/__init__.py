"""Reports of a scoring run: the versioned JSON document, gates, JUnit XML, Markdown, terminal, compare.

Every writer reads the `ReportDocument` (built once from a pydantic-evals `EvaluationReport`), so
the JSON on disk, the CI views and the exit status all say the same thing.
"""
