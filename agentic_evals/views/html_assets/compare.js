/* The comparison view (views/html_compare.py): two runs of a dataset, baseline and candidate.
   Reads the payload through AE.payload() and builds every element with AE.h (text through
   textContent only). The case list is drawn a batch at a time (AE.lazyList) and a case's details
   only when it is opened, so 10,000 cases cost what is on screen. */
(() => {
  const {h} = AE;
  const VIEW = 'agentic-evals/comparison';
  const SIDES = ['baseline', 'candidate'];
  const CHIPS = 6;

  AE.payload().then(draw).catch(AE.fail);

  function draw(data) {
    if (!data || data.view !== VIEW) throw new Error(`not a comparison payload (view ${data && data.view})`);
    const state = {query: '', regressionsOnly: false, changedOnly: false, evaluator: ''};
    const averages = averagesSection(data);
    const cases = casesSection(data, state);
    const app = document.getElementById('app');
    app.replaceChildren(header(data), filters(data, state, () => { averages.update(state); cases.update(state); }),
      averages.element, cases.element);
    document.body.dataset.ready = 'true';
  }

  // -- the verdict --------------------------------------------------------------------------------

  function header(data) {
    const v = data.verdict;
    const [baseline, candidate] = data.runs;
    const run = (label, r) => h('tr', {},
      h('th', {scope: 'row', text: label}),
      h('td', {class: 'cmp-run-name', text: r.name}),
      h('td', {class: 'num', text: `${r.cases.toLocaleString('en-US')} cases`}),
      h('td', {class: 'num', text: `${r.failed_cases.toLocaleString('en-US')} failed`}),
      h('td', {class: 'num', text: `fail rate ${r.fail_rate}`}));
    return h('header', {id: 'verdict', class: `cmp-verdict ${v.passed ? 'cmp-pass' : 'cmp-fail'}`},
      h('h1', {}, 'Comparison: ', h('span', {class: 'cmp-run-name', text: baseline.name}), ' → ',
        h('span', {class: 'cmp-run-name', text: candidate.name})),
      h('p', {class: 'cmp-verdict-line'},
        h('span', {class: `badge ${v.passed ? 'pass' : 'fail'}`, text: v.passed ? 'NO REGRESSION' : 'REGRESSION'}),
        ' ', h('span', {id: 'verdict-summary', text: v.summary})),
      h('p', {class: 'muted', id: 'verdict-counts'},
        `tolerance ${v.tolerance} · ${v.compared} gated results compared: ${v.regressions} regressed, ` +
        `${v.improved} improved`),
      h('table', {class: 'cmp-runs'}, h('tbody', {}, run('Baseline', baseline), run('Candidate', candidate))));
  }

  // -- filters ------------------------------------------------------------------------------------

  function filters(data, state, changed) {
    const search = h('input', {type: 'search', id: 'search', placeholder: 'Search cases, results, tools',
      'aria-label': 'Search cases, results and tools', autocomplete: 'off'});
    const debounced = AE.debounce(() => { state.query = search.value.trim().toLowerCase(); changed(); });
    search.addEventListener('input', debounced);
    const checkbox = (id, label, key) => h('label', {class: 'cmp-check'},
      h('input', {type: 'checkbox', id, onchange: (e) => { state[key] = e.target.checked; changed(); }}), ' ', label);
    const evaluator = h('select', {id: 'evaluator', 'aria-label': 'Evaluator',
      onchange: (e) => { state.evaluator = e.target.value; changed(); }},
      h('option', {value: '', text: 'All evaluators'}),
      data.evaluators.map((name) => h('option', {value: name, text: name})));
    return h('section', {id: 'filters', class: 'cmp-filters', 'aria-label': 'Filters'},
      search, checkbox('regressions-only', 'Regressions only', 'regressionsOnly'),
      checkbox('changed-only', 'Changed only', 'changedOnly'), evaluator);
  }

  // -- averages -----------------------------------------------------------------------------------

  function averagesSection(data) {
    const rows = data.averages.map((a) => ({average: a, row: averageRow(a)}));
    const count = h('p', {class: 'muted', id: 'averages-count'});
    const empty = h('p', {class: 'cmp-empty', hidden: true, text: 'No result matches the filters.'});
    const element = h('section', {id: 'averages', 'aria-labelledby': 'averages-title'},
      h('h2', {id: 'averages-title', text: 'Averages'}),
      h('p', {class: 'muted', text: 'Score averages, assertion pass rates and the fail rate are gated; ' +
        'metric averages are shown. Regressions first.'}),
      h('table', {class: 'cmp-averages'},
        h('thead', {}, h('tr', {}, ['Result', 'Kind', 'Evaluator', 'Baseline', 'Candidate', 'Delta', 'Status']
          .map((t, i) => h('th', {scope: 'col', class: i >= 3 && i <= 5 ? 'num' : null, text: t})))),
        h('tbody', {}, rows.map((r) => r.row))),
      empty, count);
    function update(state) {
      let shown = 0;
      for (const {average, row} of rows) {
        const visible = (!state.regressionsOnly || average.status === 'regressed') &&
          (!state.evaluator || average.evaluators.includes(state.evaluator));
        row.hidden = !visible;
        shown += visible;
      }
      empty.hidden = shown > 0;
      count.textContent = `${shown} of ${rows.length} results shown`;
    }
    update({});
    return {element, update};
  }

  function averageRow(a) {
    const status = a.status === 'regressed' ? h('span', {class: 'badge fail', text: 'regressed'})
      : a.status === 'improved' ? h('span', {class: 'badge pass', text: 'improved'}) : '';
    return h('tr', {class: a.status ? `cmp-${a.status}` : null, 'data-status': a.status || 'same', title: a.summary},
      h('td', {class: 'cmp-result-name', text: a.name}),
      h('td', {text: a.kind}),
      h('td', {class: 'muted', text: a.evaluators.join(', ')}),
      h('td', {class: 'num', text: a.baseline ?? '-'}),
      h('td', {class: 'num', text: a.candidate ?? '-'}),
      h('td', {class: 'num', text: a.delta ?? ''}),
      h('td', {}, status));
  }

  // -- cases --------------------------------------------------------------------------------------

  function casesSection(data, state) {
    const all = data.cases;
    const counts = {worse: 0, changed: 0, unchanged: 0};
    for (const c of all) counts[c.change]++;
    const count = h('p', {class: 'muted', id: 'case-count', 'aria-live': 'polite'});
    const empty = h('p', {class: 'cmp-empty', hidden: true, text: 'No case matches the filters.'});
    const list = h('ol', {id: 'case-list', class: 'cmp-cases'});
    const element = h('section', {id: 'cases', 'aria-labelledby': 'cases-title'},
      h('h2', {id: 'cases-title', text: 'Cases'}),
      h('p', {class: 'muted', text: `${counts.worse.toLocaleString('en-US')} worse, ` +
        `${counts.changed.toLocaleString('en-US')} changed otherwise, ` +
        `${counts.unchanged.toLocaleString('en-US')} unchanged. Open a case for its results and, when it ` +
        'changed, both runs side by side.'}),
      count, list, empty);
    const lazy = AE.lazyList(list, all, caseItem);
    const haystacks = new Map();
    function update(state) {
      const shown = all.filter((c) => matches(c, state, haystacks));
      lazy.reset(shown);
      empty.hidden = shown.length > 0;
      count.textContent = `${shown.length.toLocaleString('en-US')} of ${all.length.toLocaleString('en-US')} cases`;
      list.dataset.query = state.query;  // what the list shows now (the search box is debounced)
    }
    count.textContent = `${all.length.toLocaleString('en-US')} of ${all.length.toLocaleString('en-US')} cases`;
    return {element, update};
  }

  function matches(c, state, haystacks) {
    const results = state.evaluator ? c.results.filter((r) => r.evaluator === state.evaluator) : c.results;
    const wholeCase = c.case_change && (!state.evaluator || c.evaluators.includes(state.evaluator));
    if (state.evaluator && !results.length) return false;
    if (state.regressionsOnly && !(results.some((r) => r.worse) || (wholeCase && c.case_change.worse))) return false;
    if (state.changedOnly && !(results.some((r) => r.changed) || wholeCase)) return false;
    if (state.query) {
      let text = haystacks.get(c);
      if (text === undefined) {
        const tools = (c.runs || []).flatMap((run) => (run && run.timeline ? run.timeline.calls.map((t) => t.name) : []));
        text = [c.name, ...c.results.map((r) => r.name), ...c.evaluators, ...tools].join('\n').toLowerCase();
        haystacks.set(c, text);
      }
      if (!text.includes(state.query)) return false;
    }
    return true;
  }

  const CHANGE_BADGE = {worse: ['fail', 'worse'], changed: ['warn', 'changed'], unchanged: ['neutral', 'same']};

  function caseItem(c) {
    const [kind, word] = CHANGE_BADGE[c.change];
    const changedResults = c.results.filter((r) => r.changed);
    const chips = changedResults.slice(0, CHIPS).map((r) => h('span', {class: `cmp-chip${r.worse ? ' cmp-worse' : ''}`},
      h('span', {class: 'cmp-chip-name', text: r.name}), ': ', cellText(r.baseline), ' → ', cellText(r.candidate)));
    if (changedResults.length > CHIPS) chips.push(h('span', {class: 'muted', text: `+${changedResults.length - CHIPS} more`}));
    const body = h('div', {class: 'cmp-case-body'});
    const details = h('details', {class: 'cmp-case-details'},
      h('summary', {},
        h('span', {class: `badge ${kind}`, text: word}), ' ',
        h('span', {class: 'cmp-case-name', text: c.name}), ' ',
        c.case_change ? h('span', {class: `cmp-case-state${c.case_change.worse ? ' cmp-worse' : ''}`,
          text: caseState(c.case_change)}) : null,
        h('span', {class: 'cmp-chips'}, chips)),
      body);
    details.addEventListener('toggle', () => {
      if (details.open && !body.childElementCount) AE.append(body, caseBody(c));
    });
    return h('li', {class: `cmp-case cmp-case-${c.change}`, 'data-case': c.name}, details);
  }

  function cellText(cell) {
    return cell ? cell.value : '-';
  }

  function caseState(change) {
    const {baseline, candidate} = change;
    if (baseline === 'absent') return candidate === 'ran' ? 'added' : `added, ${candidate}`;
    if (candidate === 'absent') return 'removed';
    if (candidate === 'failed to run') return 'failed to run';
    return `${baseline} → ${candidate}`;
  }

  function caseBody(c) {
    const parts = [resultsTable(c)];
    if (!c.runs) {
      parts.push(h('p', {class: 'muted', text: 'Nothing changed in this case; its trajectories are in each run\'s own report.'}));
      return parts;
    }
    parts.push(runsHeader(c.runs), metricsTable(c.runs), callsSideBySide(c.runs), alignmentsSideBySide(c.runs));
    return parts;
  }

  function resultsTable(c) {
    const cell = (result, side) => {
      const value = result[side];
      if (!value) return h('td', {class: 'muted', text: '-'});
      const cls = value.kind === 'assertion' ? (value.passed ? 'badge pass' : 'badge fail')
        : value.kind === 'error' ? 'badge fail' : 'cmp-value';
      return h('td', {}, h('span', {class: cls, text: value.value}),
        value.reason ? h('div', {class: 'cmp-reason', text: value.reason}) : null);
    };
    return h('table', {class: 'cmp-results'},
      h('thead', {}, h('tr', {}, ['Result', 'Evaluator', 'Baseline', 'Candidate'].map((t) => h('th', {scope: 'col', text: t})))),
      h('tbody', {}, c.results.map((r) => h('tr', {class: r.worse ? 'cmp-worse' : r.changed ? 'cmp-changed' : null,
        'data-result': r.name},
        h('td', {}, h('span', {class: 'cmp-result-name', text: r.name}),
          r.worse ? h('span', {class: 'cmp-mark', text: ' worse'}) : r.changed ? h('span', {class: 'cmp-mark', text: ' changed'}) : null),
        h('td', {class: 'muted', text: r.evaluator || ''}),
        cell(r, 'baseline'), cell(r, 'candidate')))));
  }

  function sideBySide(className, left, right) {
    return h('div', {class: `cmp-sxs ${className}`},
      h('div', {class: 'cmp-side cmp-baseline'}, left), h('div', {class: 'cmp-side cmp-candidate'}, right));
  }

  function runsHeader(runs) {
    const side = (run, label) => {
      if (!run) return [h('h3', {text: label}), h('p', {class: 'muted', text: 'not in this run'})];
      if (run.error !== undefined) {
        return [h('h3', {text: label}), h('p', {}, h('span', {class: 'badge fail', text: 'failed to run'})),
          h('pre', {class: 'cmp-error', text: run.error})];
      }
      return [h('h3', {text: label}),
        h('p', {class: 'muted mono'}, run.trace_id ? `trace ${run.trace_id}` : 'trace not recorded',
          run.span_id ? ` · span ${run.span_id}` : '', ` · ${run.duration}`)];
    };
    return sideBySide('cmp-runs-head', side(runs[0], 'Baseline'), side(runs[1], 'Candidate'));
  }

  function metricsTable(runs) {
    const names = [...new Set(runs.flatMap((r) => (r && r.metrics ? Object.keys(r.metrics) : [])))].sort();
    if (!names.length) return null;
    const value = (run, name) => (run && run.metrics && name in run.metrics ? run.metrics[name] : '-');
    return h('table', {class: 'cmp-metrics'},
      h('thead', {}, h('tr', {}, ['Metric', 'Baseline', 'Candidate'].map((t, i) => h('th', {scope: 'col', class: i ? 'num' : null, text: t})))),
      h('tbody', {}, names.map((n) => h('tr', {class: value(runs[0], n) !== value(runs[1], n) ? 'cmp-changed' : null},
        h('td', {text: n}), h('td', {class: 'num', text: value(runs[0], n)}), h('td', {class: 'num', text: value(runs[1], n)})))));
  }

  // -- tool calls side by side ---------------------------------------------------------------------

  /** Baseline and candidate calls paired by a longest common subsequence of tool names. */
  function pairCalls(a, b) {
    const n = a.length;
    const m = b.length;
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] = a[i].name === b[j].name ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
      }
    }
    const pairs = [];
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i].name === b[j].name) pairs.push([i++, j++]);
      else if (j >= m || (i < n && lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])) pairs.push([i++, null]);
      else pairs.push([null, j++]);
    }
    return pairs;
  }

  /** The argument keys whose values differ between two calls; null when either is not a JSON object and they differ. */
  function differingKeys(a, b) {
    if (!a.fields || !b.fields) return !a.fields && !b.fields && a.arguments === b.arguments ? new Set() : null;
    const x = new Map(a.fields);
    const y = new Map(b.fields);
    const keys = new Set();
    for (const key of new Set([...x.keys(), ...y.keys()])) {
      if (!x.has(key) || !y.has(key) || x.get(key) !== y.get(key)) keys.add(key);
    }
    return keys;
  }

  /** For each tool, the argument keys an alignment found differing from the expected call. */
  function expectedMismatches(run) {
    const found = new Map();
    for (const alignment of (run && run.alignments) || []) {
      for (const row of alignment.rows) {
        if (row.status !== 'mismatch' || !row.actual) continue;
        const tool = row.actual.split('(')[0];
        if (!found.has(tool)) found.set(tool, new Set());
        for (const key of row.keys) found.get(tool).add(key);
      }
    }
    return found;
  }

  const PAIR_LABEL = {same: 'same', changed: 'arguments differ', removed: 'only in the baseline',
    added: 'only in the candidate', status: 'status differs'};

  function callsSideBySide(runs) {
    const timelines = runs.map((r) => (r && r.timeline ? r.timeline : null));
    const section = h('section', {class: 'cmp-calls', 'aria-label': 'Tool calls, baseline and candidate'},
      h('h3', {text: 'Tool calls'}));
    if (!timelines[0] && !timelines[1]) {
      section.append(h('p', {class: 'muted', text: 'No timeline was recorded in either run.'}));
      return section;
    }
    const a = timelines[0] ? timelines[0].calls : [];
    const b = timelines[1] ? timelines[1].calls : [];
    const expected = runs.map(expectedMismatches);
    const grid = h('div', {class: 'cmp-call-grid', role: 'table', 'aria-label': 'Tool calls'},
      h('div', {class: 'cmp-call-row cmp-call-head', role: 'row'},
        h('div', {role: 'columnheader', text: `Baseline (${a.length} calls)`}),
        h('div', {role: 'columnheader', text: `Candidate (${b.length} calls)`})));
    for (const [i, j] of pairCalls(a, b)) {
      const left = i === null ? null : a[i];
      const right = j === null ? null : b[j];
      let kind = 'same';
      let keys = new Set();
      if (!left) kind = 'added';
      else if (!right) kind = 'removed';
      else {
        const differing = differingKeys(left, right);
        if (differing === null || differing.size) kind = 'changed';
        else if (left.status !== right.status) kind = 'status';
        keys = differing || new Set();
      }
      grid.append(h('div', {class: `cmp-call-row cmp-pair-${kind}`, role: 'row', 'data-pair': kind,
        title: PAIR_LABEL[kind]},
        callCell(left, i, kind, keys, expected[0], timelines[0] ? 'no matching call' : 'no timeline'),
        callCell(right, j, kind, keys, expected[1], timelines[1] ? 'no matching call' : 'no timeline')));
    }
    section.append(grid);
    const omitted = timelines.map((t) => (t ? t.omitted : 0));
    if (omitted[0] || omitted[1]) {
      section.append(h('p', {class: 'muted', text: `Not recorded in the report (beyond its limit): ${omitted[0]} ` +
        `baseline and ${omitted[1]} candidate calls or model requests.`}));
    }
    section.append(sideBySide('cmp-requests', requestsSummary(timelines[0]), requestsSummary(timelines[1])));
    return section;
  }

  const CALL_STATUS = {ok: 'pass', failed: 'fail', deferred: 'warn'};

  function callCell(call, index, kind, keys, expected, missing) {
    if (!call) return h('div', {class: 'cmp-call cmp-call-none', role: 'cell'}, h('span', {class: 'muted', text: missing}));
    const mismatched = expected.get(call.name) || new Set();
    let argumentsView;
    if (call.fields) {
      argumentsView = call.fields.length ? h('table', {class: 'cmp-args'}, h('tbody', {}, call.fields.map(([key, value]) => {
        const differs = keys.has(key);
        const wrong = mismatched.has(key);
        return h('tr', {class: [differs ? 'cmp-arg-differs' : '', wrong ? 'cmp-arg-wrong' : ''].join(' ').trim() || null,
          'data-key': key},
          h('th', {scope: 'row', class: 'mono', text: key}),
          h('td', {class: 'mono', text: value}),
          h('td', {class: 'cmp-arg-note'}, differs ? h('span', {class: 'cmp-mark', text: '≠ other run'}) : null,
            wrong ? h('span', {class: 'badge fail', text: 'expected differs'}) : null));
      }))) : h('span', {class: 'muted', text: 'no arguments'});
    } else if (call.arguments === null || call.arguments === undefined) {
      argumentsView = h('span', {class: 'muted', text: 'arguments not recorded'});
    } else {
      argumentsView = h('pre', {class: `cmp-args-text${kind === 'changed' ? ' cmp-arg-differs' : ''}`, text: call.arguments});
    }
    return h('div', {class: 'cmp-call', role: 'cell', 'data-tool': call.name, 'data-status': call.status},
      h('div', {class: 'cmp-call-title'},
        h('span', {class: 'muted', text: `#${index + 1} `}),
        h('span', {class: 'cmp-tool mono', text: call.name}), ' ',
        h('span', {class: `badge ${CALL_STATUS[call.status] || 'neutral'}`, text: call.status}),
        call.output_function ? h('span', {class: 'badge neutral', text: 'output'}) : null,
        h('span', {class: 'muted cmp-call-when', text: ` ${call.agent_path.join(' › ')}` +
          (call.start === null || call.end === null ? '' : ` · ${AE.seconds(call.end - call.start)}`)})),
      argumentsView,
      call.failure_stage ? h('p', {class: 'muted', text: `failed at: ${call.failure_stage}`}) : null,
      call.result !== null && call.result !== undefined
        ? h('details', {class: 'cmp-call-result'}, h('summary', {text: call.status === 'failed' ? 'error' : 'result'}),
          h('pre', {text: call.result}))
        : null);
  }

  /** The run's model requests and their tokens: no figure where the trace recorded none (tokens null). */
  function requestsSummary(timeline) {
    if (!timeline) return null;
    const requests = timeline.requests;
    const counted = requests.filter((r) => r.input_tokens !== null && r.input_tokens !== undefined);
    const input = counted.reduce((sum, r) => sum + r.input_tokens, 0);
    const output = counted.reduce((sum, r) => sum + r.output_tokens, 0);
    const models = [...new Set(requests.map((r) => r.model).filter((m) => m))];
    let tokens = `${AE.number(input)} input and ${AE.number(output)} output tokens`;
    if (!counted.length) tokens = 'tokens not recorded';
    else if (counted.length < requests.length) tokens += ` (${AE.number(requests.length - counted.length)} without token counts)`;
    return h('p', {class: 'muted cmp-requests-summary'}, `${requests.length} model request${requests.length === 1 ? '' : 's'}` +
      (models.length ? ` (${models.join(', ')})` : '') + (requests.length ? `: ${tokens}` : ''));
  }

  // -- alignments side by side ---------------------------------------------------------------------

  const ROW_STATUS = {matched: 'pass', missing: 'fail', extra: 'warn', mismatch: 'fail'};

  function alignmentsSideBySide(runs) {
    const keyOf = (a) => `${a.result}\u0000${a.turn ?? ''}`;
    const byKey = new Map();
    runs.forEach((run, side) => {
      for (const alignment of (run && run.alignments) || []) {
        const key = keyOf(alignment);
        if (!byKey.has(key)) byKey.set(key, [null, null]);
        byKey.get(key)[side] = alignment;
      }
    });
    if (!byKey.size) return null;
    const section = h('section', {class: 'cmp-alignments', 'aria-label': 'Expected against actual calls'},
      h('h3', {text: 'Expected against actual'}));
    for (const pair of byKey.values()) {
      const any = pair[0] || pair[1];
      section.append(h('h4', {class: 'cmp-alignment-title'},
        h('span', {class: 'cmp-result-name', text: any.result}),
        any.evaluator !== any.result ? h('span', {class: 'muted', text: ` (${any.evaluator})`}) : null,
        any.turn !== null && any.turn !== undefined ? h('span', {class: 'muted', text: ` turn ${any.turn}`}) : null));
      section.append(sideBySide('cmp-alignment', alignmentTable(pair[0], 'Baseline'), alignmentTable(pair[1], 'Candidate')));
    }
    return section;
  }

  function alignmentTable(alignment, label) {
    if (!alignment) return h('p', {class: 'muted', text: `${label}: no alignment for this result`});
    const counts = {};
    for (const row of alignment.rows) counts[row.status] = (counts[row.status] || 0) + 1;
    const caption = `${label}: ` + (Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ') || 'no rows');
    return h('table', {class: 'cmp-alignment-rows', 'data-side': label.toLowerCase()},
      h('caption', {text: caption}),
      h('thead', {}, h('tr', {}, ['', 'Expected', 'Actual'].map((t) => h('th', {scope: 'col', text: t})))),
      h('tbody', {}, alignment.rows.map((row) => h('tr', {class: `cmp-row-${row.status}`, 'data-status': row.status},
        h('td', {}, h('span', {class: `badge ${ROW_STATUS[row.status] || 'neutral'}`, text: row.status})),
        h('td', {class: 'mono', text: row.expected ?? '—'}),
        h('td', {class: 'mono'}, row.actual ?? '—',
          row.keys.length ? h('div', {class: 'cmp-keys'}, 'differs: ',
            row.keys.map((k, i) => [i ? ', ' : '', h('code', {class: 'cmp-key', text: k})])) : null,
          row.differences.map((d) => h('div', {class: 'cmp-difference', text: d})))))));
  }
})();
