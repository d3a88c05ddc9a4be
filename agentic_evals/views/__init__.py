"""The views of a report: terminal, table, Markdown, JUnit XML, HTML, the comparison's, the OTLP events' export.

Every view reads the `ReportDocument` and the verdicts the result model (`reports/`) computed, and only
formats them, so the JSON on disk, the CI views and the exit status all say the same thing.
"""
