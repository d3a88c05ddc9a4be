"""JUnit XML, the test-report format every CI system renders.

Layout (the subset of the Ant/Jenkins schema that GitHub, GitLab, Jenkins, Azure and CircleCI read):

- `<testsuites>` with totals; one `<testsuite>` named after the report, one `<testcase>` per case
  and result, `classname` = the case, `name` = the result (evaluator) name;
- `<failure>` for a failed assertion, `<error>` for an evaluator that raised and for a case that
  could not run (one `<testcase name="(case)">`) -- unless `--allow-failures` lets them pass, when
  they are `<skipped>` with the reason, so a CI system that fails on any failure agrees with the
  exit status;
- a score is never a failure by itself: `--min-score` gates its average, not each case, so a case
  below the threshold passes with a note in `<system-out>`; `--min-case-score` gates each case, so
  there a case below the threshold (or without the result: a testcase of its own) is a `<failure>`,
  and so is a failed assertion it names, even with `--allow-failures`;
- `--max-case-metric` adds a testcase per case for the metric (`name` = the metric), a `<failure>`
  when the case is over the limit or did not record it;
- a second `<testsuite name="gates">` with one testcase per gate: the verdict the exit status
  gives, gate by gate.

Reasons go in the failure message and in `<system-out>` for passing results.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .document import ReportDocument
from .gates import Gates, Verdict, case_metric, format_metric, format_number
from .text import visible

CASE_TESTCASE = '(case)'
"""The testcase name used for a case that failed to run."""


def render_junit(document: ReportDocument, gates: Gates, verdict: Verdict) -> str:
    root = ET.Element('testsuites', name='agentic-evals')
    results = _results_suite(document, gates)
    gate_suite = _gates_suite(verdict)
    for suite in (results, gate_suite):
        root.append(suite)
    for key in ('tests', 'failures', 'errors', 'skipped'):
        root.set(key, str(sum(int(s.get(key, '0')) for s in (results, gate_suite))))
    root.set('time', results.get('time', '0'))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'


def _suite(name: str) -> ET.Element:
    return ET.Element('testsuite', name=_xml(name))


def _testcase(suite: ET.Element, classname: str, name: str, time: float = 0.0) -> ET.Element:
    return ET.SubElement(suite, 'testcase', classname=_xml(classname), name=_xml(name), time=f'{time:.3f}')


def _outcome(testcase: ET.Element, tag: str, message: str, kind: str) -> None:
    element = ET.SubElement(testcase, tag, message=_one_line(_xml(message)), type=kind)
    element.text = _xml(message)


def _skipped(testcase: ET.Element, message: str) -> None:
    ET.SubElement(testcase, 'skipped', message=_one_line(_xml(message))).text = _xml(message)


def _output(testcase: ET.Element, text: str | None) -> None:
    if text:
        ET.SubElement(testcase, 'system-out').text = _xml(text)


def _results_suite(document: ReportDocument, gates: Gates) -> ET.Element:
    suite = _suite(document.name)
    tests = failures = errors = skipped = 0
    for case in document.cases:
        # Attribute the recorded run's time to the case's first testcase so suite time adds up.
        time = case.duration
        for name, assertion in sorted(case.assertions.items()):
            testcase = _testcase(suite, case.name, name, time)
            time = 0.0
            tests += 1
            gated = (threshold := gates.case_threshold_for(name)) is not None and threshold > 0
            if not assertion.value and gates.allow_failures and not gated:
                skipped += 1
                _skipped(testcase, f'allowed failure: {assertion.reason or f"{name} failed"}')
            elif not assertion.value:
                failures += 1
                _outcome(testcase, 'failure', assertion.reason or f'{name} failed', 'AssertionFailed')
            else:
                _output(testcase, assertion.reason)
        for name, score in sorted(case.scores.items()):
            testcase = _testcase(suite, case.name, name, time)
            time = 0.0
            tests += 1
            threshold = gates.threshold_for(name)
            case_threshold = gates.case_threshold_for(name)
            reason = f': {score.reason}' if score.reason else ''
            if case_threshold is not None and (score.value is None or score.value < case_threshold):
                failures += 1
                value = 'n/a' if score.value is None else format_number(score.value, case_threshold)
                message = f'{name} = {value} < {format_number(case_threshold, score.value)} (min-case-score){reason}'
                _outcome(testcase, 'failure', message, 'ScoreBelowThreshold')
                continue
            value = 'n/a' if score.value is None else format_number(score.value, threshold)
            note = ''
            if threshold is not None and (score.value is None or score.value < threshold):
                note = f' (below {format_number(threshold)}; the gate is on the average)'
            _output(testcase, f'{name} = {value}{note}{reason}')
        for name, label in sorted(case.labels.items()):
            testcase = _testcase(suite, case.name, name, time)
            time = 0.0
            tests += 1
            _output(testcase, f'{name} = {label.value}' + (f': {label.reason}' if label.reason else ''))
        for error in case.evaluator_errors:
            testcase = _testcase(suite, case.name, error.name, time)
            time = 0.0
            tests += 1
            if gates.allow_failures:
                skipped += 1
                _skipped(testcase, f'allowed error: {error.message}')
            else:
                errors += 1
                _outcome(testcase, 'error', error.message, 'EvaluatorError')
        present = {*case.scores, *case.assertions, *case.labels, *(e.name for e in case.evaluator_errors)}
        for name in dict.fromkeys(g.name for g in gates.min_case_scores):
            if name not in present and gates.expects(case.name, name):
                testcase = _testcase(suite, case.name, name, time)
                time = 0.0
                tests += 1
                failures += 1
                _outcome(testcase, 'failure', f'no {name} result (min-case-score)', 'MissingResult')
        for name in dict.fromkeys(g.name for g in gates.max_case_metrics):
            limit = gates.case_metric_limit_for(name)
            assert limit is not None
            testcase = _testcase(suite, case.name, name, time)
            time = 0.0
            tests += 1
            measured = case_metric(case, name)
            if measured is not None and measured <= limit:
                _output(testcase, f'{name} = {format_metric(name, measured)} <= {format_metric(name, limit, measured)}')
                continue
            failures += 1
            if measured is None:
                _outcome(testcase, 'failure', f'{name} not recorded (max-case-metric)', 'MissingMetric')
            else:
                shown = f'{format_metric(name, measured, limit)} > {format_metric(name, limit, measured)}'
                _outcome(testcase, 'failure', f'{name} = {shown} (max-case-metric)', 'MetricOverLimit')
    for failure in document.failures:
        testcase = _testcase(suite, failure.name, CASE_TESTCASE)
        tests += 1
        if gates.allow_failures:
            skipped += 1
            _skipped(testcase, f'allowed error: {failure.error}')
        else:
            errors += 1
            _outcome(testcase, 'error', failure.error, 'CaseFailure')
    _counts(suite, tests, failures, errors, sum(c.duration for c in document.cases), skipped)
    return suite


def _gates_suite(verdict: Verdict) -> ET.Element:
    suite = _suite('gates')
    failures = 0
    for result in verdict.results:
        testcase = _testcase(suite, 'gates', result.gate)
        if result.passed:
            _output(testcase, result.detail)
        else:
            failures += 1
            _outcome(testcase, 'failure', result.detail, 'GateFailed')
    _counts(suite, len(verdict.results), failures, 0, 0.0)
    return suite


def _counts(suite: ET.Element, tests: int, failures: int, errors: int, time: float, skipped: int = 0) -> None:
    suite.set('tests', str(tests))
    suite.set('failures', str(failures))
    suite.set('errors', str(errors))
    suite.set('skipped', str(skipped))
    suite.set('time', f'{time:.3f}')


def _xml(text: str) -> str:
    """Text from data as XML 1.0 can carry it: controls and surrogates escaped (`visible`), not dropped.

    ElementTree escapes `&`, `<` and quotes itself, but would write characters XML 1.0 forbids even
    escaped, and the file would not parse.
    """
    return visible(text)


def _one_line(text: str) -> str:
    """Attribute values are shown on one line by most CI views: keep the first line, bounded."""
    first = text.strip().split('\n')[0] if text.strip() else text
    return first if len(first) <= 500 else first[:497] + '...'
