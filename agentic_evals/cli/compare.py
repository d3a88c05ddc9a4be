"""`agentic-evals-otel compare`: two JSON reports side by side; a regression fails."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_FAIL, EXIT_PASS, check_writable, tolerance


def add_parser(commands: Any) -> None:
    compare = commands.add_parser(
        'compare',
        help='compare two JSON reports and fail on a regression',
        description=(
            'Compare two reports written by `run --json`: the average of each score, the pass rate of each'
            ' assertion and the fail rate, with per-case changes. Fails when a score or pass rate drops (or the'
            ' fail rate rises) by more than the tolerance.'
        ),
        epilog=(
            'exit status: 0 no regression, 1 a regression, 2 usage error or unreadable report, 3 internal error'
            ' (a bug), 130 interrupted'
        ),
    )
    compare.add_argument('baseline', metavar='BASELINE', type=Path, help='the report to compare against')
    compare.add_argument('candidate', metavar='CANDIDATE', type=Path, help='the new report')
    compare.add_argument(
        '--tolerance',
        metavar='X',
        type=tolerance,
        default=0.0,
        help='allowed drop of an average or pass rate (0..1 fractions), default 0',
    )
    compare.add_argument('--markdown', metavar='PATH', type=Path, help='write the comparison as Markdown')
    compare.add_argument(
        '--html',
        metavar='PATH',
        type=Path,
        help='write the comparison as one self-contained HTML page: deltas, cases, both runs side by side',
    )
    compare.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..reports.compare import compare_documents
    from ..reports.document import read_document
    from ..views.compare_view import print_comparison, render_comparison_markdown
    from ..views.terminal import make_console, print_verdict
    from .common import write_text

    comparison = compare_documents(read_document(args.baseline), read_document(args.candidate), args.tolerance)
    for path in (args.markdown, args.html):  # both, before either is written
        if path is not None:
            check_writable(path)
    if args.markdown is not None:
        write_text(args.markdown, render_comparison_markdown(comparison))
    if args.html is not None:
        from ..views.html_compare import render_comparison_html

        write_text(args.html, render_comparison_html(comparison))
    console = make_console(sys.stdout)
    print_comparison(comparison, console)
    print_verdict(console, comparison.summary, passed=comparison.passed)
    return EXIT_PASS if comparison.passed else EXIT_FAIL
