"""`agentic-evals-otel render`: a report written by `run --json` as an HTML report, its gates checked again."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_FAIL, EXIT_PASS, EXIT_STATUS, add_gate_arguments, check_writable, gates_from_args


def add_parser(commands: Any) -> None:
    render = commands.add_parser(
        'render',
        help='write the HTML report of a JSON report (run --json), checking the gates again',
        description=(
            'Render a report written by `run --json` as one self-contained HTML file, without the traces. The'
            ' gate flags are those of `run`: the verdict the page shows (and the exit status) is the one they give'
            ' on this report. Prints the verdict line.'
        ),
        epilog=EXIT_STATUS,
    )
    render.add_argument('report', metavar='REPORT', type=Path, help='a JSON report (agentic-evals/report@1)')
    render.add_argument(
        '--html', metavar='PATH', type=Path, required=True, help='write the HTML report here (one self-contained file)'
    )
    add_gate_arguments(render)
    render.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..reports.document import read_document
    from ..reports.judge import check_gates
    from ..views.html import html_chunks
    from ..views.terminal import make_console, print_verdict
    from .common import write_chunks

    document = read_document(args.report)
    check_writable(args.html)
    gates = gates_from_args(args, expected=document.expected_results())
    verdict = check_gates(document, gates)
    write_chunks(args.html, html_chunks(document, gates, verdict))
    print_verdict(make_console(sys.stdout), verdict.summary, passed=verdict.passed)
    return EXIT_PASS if verdict.passed else EXIT_FAIL
