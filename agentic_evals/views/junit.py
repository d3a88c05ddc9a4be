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
from collections.abc import Iterator
from typing import NamedTuple

from ..reports.document import CaseFailure, CaseResult, ReportDocument
from ..reports.gates import Gates, format_metric, format_number
from ..reports.judge import case_verdict, failure_verdict
from ..reports.verdict import Check, Verdict
from .text import visible
from .wording import check_figure

CASE_TESTCASE = '(case)'
"""The testcase name used for a case that failed to run."""


def render_junit(document: ReportDocument, gates: Gates, verdict: Verdict) -> str:
    return ''.join(junit_chunks(document, gates, verdict))


def junit_chunks(document: ReportDocument, gates: Gates, verdict: Verdict) -> Iterator[str]:
    """`render_junit`'s text a case at a time, in two passes over the cases: the suite's counts (which
    its opening tag carries), then the testcases. Each testcase is serialised by ElementTree, indented
    as `ET.indent` indents the whole tree, so the text is the same."""
    tally = _Tally()
    time = sum(tally.case(case, gates) for case in document.cases)
    for failure in document.failures:
        tally.add(_failure_testcase(failure, gates))
    gate_suite = _gates_suite(verdict)
    suite = {'name': _xml(document.name), **tally.counts(), 'time': f'{time:.3f}'}
    root = {'name': 'agentic-evals'}
    for key in ('tests', 'failures', 'errors', 'skipped'):
        root[key] = str(int(suite[key]) + int(gate_suite.get(key, '0')))
    root['time'] = suite['time']
    yield '<?xml version="1.0" encoding="UTF-8"?>\n' + _start_tag('testsuites', root) + '\n  '
    if not tally.tests:
        yield ET.tostring(ET.Element('testsuite', suite), encoding='unicode')
    else:
        yield _start_tag('testsuite', suite)
        for case in document.cases:
            yield ''.join(_serialised(testcase) for testcase in _case_testcases(case, gates))
        for failure in document.failures:
            yield _serialised(_failure_testcase(failure, gates))
        yield '\n  </testsuite>'
    ET.indent(gate_suite, level=1)
    yield '\n  ' + ET.tostring(gate_suite, encoding='unicode') + '\n</testsuites>\n'


def _start_tag(tag: str, attributes: dict[str, str]) -> str:
    """The opening tag ElementTree writes for an element with these attributes (its empty form, opened)."""
    empty = ET.tostring(ET.Element(tag, attributes), encoding='unicode')
    assert empty.endswith(' />')
    return empty[: -len(' />')] + '>'


def _serialised(testcase: _Testcase) -> str:
    """One testcase at its place in the whole tree: its line's indentation, its children indented below it."""
    element = testcase.element()
    ET.indent(element, level=2)
    return '\n    ' + ET.tostring(element, encoding='unicode')


class _Testcase(NamedTuple):
    """A testcase and its outcome: `failure`, `error`, `skipped`, `system-out` (passed, with text) or `None`."""

    classname: str
    name: str
    time: float = 0.0
    outcome: str | None = None
    text: str = ''
    kind: str = ''

    def element(self) -> ET.Element:
        testcase = ET.Element('testcase', classname=_xml(self.classname), name=_xml(self.name), time=f'{self.time:.3f}')
        if self.outcome in ('failure', 'error'):
            _outcome(testcase, self.outcome, self.text, self.kind)
        elif self.outcome == 'skipped':
            _skipped(testcase, self.text)
        elif self.outcome == 'system-out':
            _output(testcase, self.text)
        return testcase


class _Tally:
    """The results suite's counts, added up testcase by testcase."""

    def __init__(self) -> None:
        self.tests = self.failures = self.errors = self.skipped = 0

    def case(self, case: CaseResult, gates: Gates) -> float:
        """Count the case's testcases; its duration (so `sum` adds up the suite's time as it always has)."""
        for testcase in _case_testcases(case, gates):
            self.add(testcase)
        return case.duration

    def add(self, testcase: _Testcase) -> None:
        self.tests += 1
        self.failures += testcase.outcome == 'failure'
        self.errors += testcase.outcome == 'error'
        self.skipped += testcase.outcome == 'skipped'

    def counts(self) -> dict[str, str]:
        return {
            'tests': str(self.tests),
            'failures': str(self.failures),
            'errors': str(self.errors),
            'skipped': str(self.skipped),
        }


def _outcome(testcase: ET.Element, tag: str, message: str, kind: str) -> None:
    element = ET.SubElement(testcase, tag, message=_one_line(_xml(message)), type=kind)
    element.text = _xml(message)


def _skipped(testcase: ET.Element, message: str) -> None:
    ET.SubElement(testcase, 'skipped', message=_one_line(_xml(message))).text = _xml(message)


def _output(testcase: ET.Element, text: str | None) -> None:
    if text:
        ET.SubElement(testcase, 'system-out').text = _xml(text)


def _case_testcases(case: CaseResult, gates: Gates) -> Iterator[_Testcase]:
    """The case's testcases in order: assertions, scores, labels, evaluator errors, per-case gates, each
    the outcome of its check (`case_verdict`)."""
    # Attribute the recorded run's time to the case's first testcase so suite time adds up.
    time = case.duration
    checks = case_verdict(case, gates).checks
    kinds = [('assertion', 'score'), ('label',), ('error', 'missing', 'metric')]
    for kind in kinds:
        if kind == ('label',):
            for name, label in sorted(case.labels.items()):
                text = f'{name} = {label.value}' + (f': {label.reason}' if label.reason else '')
                yield _Testcase(case.name, name, time, 'system-out', text)
                time = 0.0
            continue
        for check in checks:
            if check.kind in kind:
                yield _testcase_of(case, check, time)
                time = 0.0


def _testcase_of(case: CaseResult, check: Check, time: float) -> _Testcase:
    name = check.name
    if check.kind == 'assertion':
        said = case.assertions[name].reason
        if check.status == 'allowed':
            return _Testcase(case.name, name, time, 'skipped', f'allowed failure: {said or f"{name} failed"}')
        if check.status == 'fail':
            return _Testcase(case.name, name, time, 'failure', said or f'{name} failed', 'AssertionFailed')
        return _Testcase(case.name, name, time, 'system-out', said or '')
    if check.kind == 'score':
        reason = f': {said}' if (said := case.scores[name].reason) else ''
        if check.status == 'fail':
            message = f'{name} = {check_figure(check)} (min-case-score){reason}'
            return _Testcase(case.name, name, time, 'failure', message, 'ScoreBelowThreshold')
        value = 'n/a' if check.value is None else format_number(check.value, check.bound)
        note = ''
        if check.status == 'below' and check.bound is not None:
            note = f' (below {format_number(check.bound)}; the gate is on the average)'
        return _Testcase(case.name, name, time, 'system-out', f'{name} = {value}{note}{reason}')
    if check.kind == 'error':
        message = next(e.message for e in case.evaluator_errors if e.name == name)
        if check.status == 'allowed':
            return _Testcase(case.name, name, time, 'skipped', f'allowed error: {message}')
        return _Testcase(case.name, name, time, 'error', message, 'EvaluatorError')
    if check.kind == 'missing':
        return _Testcase(case.name, name, time, 'failure', f'no {name} result (min-case-score)', 'MissingResult')
    if check.status == 'pass':
        return _Testcase(case.name, name, time, 'system-out', f'{name} = {check_figure(check)} <= {_bound(check)}')
    if check.value is None:
        return _Testcase(case.name, name, time, 'failure', f'{name} not recorded (max-case-metric)', 'MissingMetric')
    message = f'{name} = {check_figure(check)} (max-case-metric)'
    return _Testcase(case.name, name, time, 'failure', message, 'MetricOverLimit')


def _bound(check: Check) -> str:
    assert check.bound is not None
    return format_metric(check.name, check.bound, check.value)


def _failure_testcase(failure: CaseFailure, gates: Gates) -> _Testcase:
    run = failure_verdict(failure, gates).checks[0]
    if run.status == 'allowed':
        return _Testcase(failure.name, CASE_TESTCASE, 0.0, 'skipped', f'allowed error: {failure.error}')
    return _Testcase(failure.name, CASE_TESTCASE, 0.0, 'error', failure.error, 'CaseFailure')


def _suite(name: str) -> ET.Element:
    return ET.Element('testsuite', name=_xml(name))


def _testcase(suite: ET.Element, classname: str, name: str, time: float = 0.0) -> ET.Element:
    return ET.SubElement(suite, 'testcase', classname=_xml(classname), name=_xml(name), time=f'{time:.3f}')


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
