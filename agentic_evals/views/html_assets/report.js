'use strict';
/* The HTML report (views/html.py): draws the summary and the case list from the payload.

   Payload (built by html.py's `payload`, every string already passed through `visible`):
     name, verdict {passed, summary, gates: [[gate, passed, detail]]},
     totals {cases, failed, failed_results, case_failures, assertions, failed_assertions, evaluator_errors},
     averages [[name, kind, shown, gate text, gate status 1/0/null]], metrics [[name, shown mean, cases]],
     evaluators [names], agents [names], no_timeline (text), open (how many of the first failed cases
     are open at load), cases [case], failed cases first.
   A large report is split (html.py's FIRST_ROWS): instead of `cases`, the payload has count (of cases)
     and rows [{n, s, b}] for the first cases (the whole case for each of the failed ones open at
     load), and every case follows in parts (AE.parts(), arrays of cases in order), read once the page
     is parsed.
   A case: n name, s 'fail' | 'pass' | 'scored' (no gate judged it), b its one-line brief [error's first line of a case that did not run,
     names of its failed results, number of calls or null (no timeline), duration], F the error of a case
     that did not run,
     R results [[kind, name, value, reason, evaluator, mark]]: kind s score, a assertion, l label,
       e evaluator error, g a per-case gate the case fails; mark 0 fine, 1 failed, 2 below a min-score,
     m metrics {name: value, duration}, in / out / exp / meta (JSON text), tr trace id, sp span id,
     T timeline, times in whole microseconds since the trace started {L lanes [agent path], A agents [[lane, start, end]],
       C calls [[lane, name, status 0 ok / 1 failed / 2 deferred, start, end, arguments, result, failure stage,
         output function 0/1]], Q requests [[lane, model, start, end, input tokens, output tokens, cost]]
         (both token counts null where the trace recorded none), o omitted},
     X alignments [[result, evaluator, turn, rows [[status, expected, actual, keys, differences]]]]: a row
       of just [status, expected] has its actual call the same, nothing marked.

   Nothing here is rendered before it is needed: the list a batch at a time (AE.lazyList), a case's
   details when it is first opened (the first `open` failed cases are opened at load; "Open all" opens
   the rows drawn, and each row as the list draws it, never thousands at once). A timeline is laid out
   in pixels once it has a width (layoutTimeline: a label too long for its bar goes beside it, a failed
   call keeps a visible width), and again when its width changes; <div class="timeline" data-laid-out>
   holds the width (px) it was laid out for. <body data-ready> says the summary and first rows are
   shown; <body data-opened> that the first failed cases are open (a frame later, so that they never
   hold back the first paint); <body data-loaded> that every case is in and the filters work. */
(() => {
  const {h} = AE;
  const STATUS = ['ok', 'failed', 'deferred'];
  const STATUS_TEXT = {ok: '✓ ok', failed: '✗ failed', deferred: '‖ deferred'}; // symbols in every common font
  // A case's badge: `scored` when no gate judged anything in it (its scores are scores, never a pass).
  const CASE_BADGE = {fail: ['fail', 'FAIL'], pass: ['pass', 'PASS'], scored: ['neutral', 'SCORED']};
  const ALIGN_TEXT = {matched: '= matched', missing: '− missing', extra: '+ extra', mismatch: '≠ wrong arguments'};
  const ALL = '';

  AE.payload().then(draw).catch(AE.fail);

  function draw(data) {
    drawHeader(data);
    drawSummary(data);
    const list = drawCases(data);
    document.body.dataset.ready = '';
    // The first failed cases open in a task after the frame that paints the summary and the first rows:
    // their details (a timeline of every call) never hold back the first screen. <body data-opened>
    // says they are open.
    requestAnimationFrame(() => setTimeout(() => {
      list.openFirst();
      document.body.dataset.opened = '';
    }, 0));
    if (data.cases) list.complete(data.cases);
    else AE.parts(list.progress).then((parts) => list.complete(parts.flat())).catch(list.failed);
  }

  // -- header and summary -------------------------------------------------------------------------

  function drawHeader(data) {
    const passed = data.verdict.passed;
    document.getElementById('top').append(
      h('h1', null, data.name, ' ', h('span', {class: `badge ${passed ? 'pass' : 'fail'}`, id: 'verdict'}, passed ? 'PASS' : 'FAIL')),
      h('p', {class: 'verdict-line', id: 'verdict-summary'}, data.verdict.summary),
    );
  }

  function drawSummary(data) {
    const t = data.totals;
    const section = document.getElementById('summary');
    const passedAssertions = t.assertions - t.failed_assertions;
    const failedNote = t.failed > t.failed_results ? ` (${t.failed - t.failed_results} by a per-case gate only)` : '';
    section.append(
      h('div', {class: 'tiles'},
        tile('cases', t.cases, 'cases'),
        tile('failed', t.failed, 'failed' + failedNote, t.failed ? 'fail' : 'pass'),
        tile('passed', t.cases - t.failed, 'passed'),
        tile('case-failures', t.case_failures, 'did not run', t.case_failures ? 'fail' : null),
        tile('assertions', `${AE.number(passedAssertions)}/${AE.number(t.assertions)}`, 'assertions passed', t.failed_assertions ? 'fail' : null),
        tile('evaluator-errors', t.evaluator_errors, 'evaluator errors', t.evaluator_errors ? 'fail' : null),
      ),
    );
    // Side by side, each at most a few rows high (it scrolls past them), so that the case list starts on
    // the first screen; a failing row comes first in its table, so a scroll never hides one.
    const panels = h('div', {class: 'summary-panels'});
    panels.append(panel('Gates', table(
      ['Gate', 'Outcome', 'Detail'],
      failingFirst(data.verdict.gates, (g) => g[1] === false)
        .map(([gate, passed, detail]) => [gate, badge(passed ? 'pass' : 'fail', passed ? 'pass' : 'fail'), detail]),
      'gates',
    )));
    if (data.averages.length) {
      panels.append(panel('Averages and pass rates', table(
        ['Result', 'Kind', 'Average / pass rate', 'Gate'],
        failingFirst(data.averages, (a) => a[4] === 0).map(([name, kind, shown, gate, status]) => [
          name, kind, shown,
          status === null || status === undefined ? gate : [badge(status ? 'pass' : 'fail', status ? 'pass' : 'fail'), ' ', gate],
        ]),
        'averages',
      )));
    }
    if (data.metrics.length) {
      panels.append(panel('Run metrics (average per case)', table(
        ['Metric', 'Average', 'Cases'],
        data.metrics.map(([name, shown, count]) => [name, shown, AE.number(count)]),
        'metrics',
      )));
    }
    section.append(panels);
  }

  function panel(title, content) {
    return h('div', {class: 'summary-panel'}, h('h2', null, title), h('div', {class: 'summary-scroll'}, content));
  }

  /** `rows`, those for which `failed(row)` holds first, each group in its own order. */
  function failingFirst(rows, failed) {
    return [...rows.filter(failed), ...rows.filter((r) => !failed(r))];
  }

  function tile(key, value, label, kind) {
    return h('div', {class: `tile ${kind || ''}`, 'data-stat': key},
      h('span', {class: 'tile-value'}, typeof value === 'number' ? AE.number(value) : value),
      h('span', {class: 'tile-label'}, label));
  }

  function badge(kind, text) {
    return h('span', {class: `badge ${kind}`}, text);
  }

  /** A table; `rows` are lists of cells (text, a node, or a list of them). */
  function table(header, rows, id) {
    return h('table', {id},
      h('thead', null, h('tr', null, header.map((name) => h('th', {scope: 'col'}, name)))),
      h('tbody', null, rows.map((cells) => h('tr', null, cells.map((cell) => h('td', null, cell))))));
  }

  // -- the case list --------------------------------------------------------------------------------

  function drawCases(data) {
    const section = document.getElementById('cases');
    const failedOnly = h('input', {type: 'checkbox', id: 'failed-only'});
    const evaluator = select('evaluator', 'All evaluators', data.evaluators);
    const agent = select('agent', 'All agents', data.agents);
    const search = h('input', {type: 'search', id: 'search', placeholder: 'Case, tool or reason', 'aria-label': 'Search cases, tools and reasons'});
    const count = h('output', {id: 'shown-count', 'aria-live': 'polite'});
    const toggleAll = h('button', {type: 'button', id: 'toggle-all', 'aria-controls': 'case-list',
      title: 'Open or close every case in the list (cases further down open as the list reaches them)'}, 'Open all');
    section.append(
      h('h2', null, 'Cases'),
      h('div', {class: 'toolbar', role: 'search'},
        toggleAll,
        h('label', null, failedOnly, ' Failed only'),
        h('label', null, 'Evaluator ', evaluator),
        data.agents.length ? h('label', null, 'Agent ', agent) : null,
        h('label', null, 'Search ', search),
        count),
    );
    const list = h('ol', {class: 'case-list', id: 'case-list'});
    section.append(list);
    // Until every case is in (a split report), the rows of the first cases are drawn from their list
    // data, the filters wait (disabled: none applies to a part of the list) and a note counts the rest.
    let cases = data.cases || null;
    let received = 0;
    let loaded;
    const whole = new Promise((resolve) => { loaded = resolve; });
    const first = cases || data.rows.map((row, i) => ({...row, i}));
    const total = cases ? cases.length : data.count;
    let next = 0; // ids for case bodies (aria-controls), unique across re-renders
    // "Open all" opens the rows drawn and, while it holds, each row as the list draws it (a batch at a
    // time as it is scrolled to): never every case of a large report at once.
    let allOpen = false;
    const render = (c) => {
      const row = caseRow(c, data, next++, whole);
      if (allOpen) openers.get(row)(true);
      return row;
    };
    const lazy = AE.lazyList(list, first, render);
    toggleAll.addEventListener('click', () => {
      allOpen = !allOpen;
      for (const row of list.children) openers.get(row)(allOpen);
      toggleAll.textContent = allOpen ? 'Close all' : 'Open all';
    });
    const controls = [failedOnly, evaluator, agent, search];
    const note = h('p', {class: 'cases-loading muted', id: 'cases-loading', role: 'status'});
    const showing = (n) => { count.textContent = `Showing ${AE.number(n)} of ${AE.number(total)} cases`; };
    const waiting = () => {
      const left = total - Math.max(first.length, received);
      note.textContent = `Loading ${AE.number(left)} more case${left === 1 ? '' : 's'}… (the filters and the search work once they are in)`;
    };
    if (!cases) {
      for (const control of controls) control.disabled = true;
      section.append(note);
      waiting();
      count.textContent = `Showing the first ${AE.number(first.length)} of ${AE.number(total)} cases`;
    }

    function apply() {
      const query = search.value.trim().toLowerCase();
      const shown = cases.filter((c) =>
        (!failedOnly.checked || failing(c, evaluator.value)) &&
        (evaluator.value === ALL || hasEvaluator(c, evaluator.value)) &&
        (agent.value === ALL || hasAgent(c, agent.value)) &&
        (!query || haystack(c).includes(query)));
      lazy.reset(shown);
      showing(shown.length);
    }
    failedOnly.addEventListener('change', apply);
    evaluator.addEventListener('change', apply);
    agent.addEventListener('change', apply);
    search.addEventListener('input', AE.debounce(apply, 120));

    return {
      /** Open the first failed cases drawn, so a trajectory shows without a click (failed cases come first). */
      openFirst() {
        [...list.children].filter((row) => row.classList.contains('fail')).slice(0, data.open || 0)
          .forEach((row) => openers.get(row)(true));
      },
      /** One more part of the cases is in. */
      progress(part) {
        received += part.length;
        waiting();
      },
      /** Every case is in: the list goes on past the first rows (which stay) and the filters work. */
      complete(all) {
        if (all.length !== total) throw new Error(`the page holds ${all.length} of its ${total} cases`);
        cases = all;
        lazy.extend(all);
        for (const control of controls) control.disabled = false;
        note.remove();
        showing(all.length);
        loaded(all);
        document.body.dataset.loaded = '';
      },
      /** The cases after the first rows cannot be read: say so where they would be (the summary stays). */
      failed(error) {
        note.textContent = `The cases after the first ${AE.number(first.length)} cannot be shown: ${error}`;
        note.setAttribute('role', 'alert');
        note.classList.replace('muted', 'page-error');
        throw error;
      },
    };
  }

  function select(id, all, names) {
    return h('select', {id}, h('option', {value: ALL}, all), names.map((name) => h('option', {value: name}, name)));
  }

  const evaluatorOf = (r) => r[4] || r[1];

  /** Failed: the case, or (with an evaluator chosen) that evaluator's result on it. */
  function failing(c, evaluator) {
    if (evaluator === ALL) return c.s === 'fail';
    return c.R.some((r) => r[5] === 1 && evaluatorOf(r) === evaluator);
  }

  function hasEvaluator(c, evaluator) {
    return c.R.some((r) => evaluatorOf(r) === evaluator);
  }

  function hasAgent(c, agent) {
    return Boolean(c.T) && c.T.L.some((path) => path[path.length - 1] === agent);
  }

  /** What the search reads, lower-cased once per case: names, tools, agents, reasons, errors. */
  const haystacks = new WeakMap();
  function haystack(c) {
    let text = haystacks.get(c);
    if (text === undefined) {
      const parts = [c.n, c.F || ''];
      for (const r of c.R) parts.push(r[1], r[3] || '', r[4] || '');
      if (c.T) {
        for (const call of c.T.C) parts.push(call[1]);
        for (const path of c.T.L) parts.push(path.join(' '));
      }
      text = parts.join('\n').toLowerCase();
      haystacks.set(c, text);
    }
    return text;
  }

  /**
   * A case's row. `c` is the case, or (in a split report, before every case is in) the list data of one
   * of the first rows: its details are then the case at its place `c.i` once `whole` (every case) is in.
   */
  function caseRow(c, data, index, whole) {
    const bodyId = `case-${index}`;
    const body = h('div', {class: 'case-body', id: bodyId, hidden: true});
    const toggle = h('button', {type: 'button', class: 'case-toggle', 'aria-expanded': 'false', 'aria-controls': bodyId},
      badge(CASE_BADGE[c.s][0], CASE_BADGE[c.s][1]),
      h('span', {class: 'case-name'}, c.n),
      h('span', {class: 'case-brief'}, brief(c)));
    const setOpen = (open) => {
      if (open && !body.firstChild) { // details are built on first open only
        if (c.R) caseBody(body, c, data);
        else {
          body.append(h('p', {class: 'muted case-loading'}, 'Loading this case…'));
          whole.then((cases) => { body.replaceChildren(); caseBody(body, cases[c.i], data); });
        }
      }
      toggle.setAttribute('aria-expanded', String(open));
      body.hidden = !open;
    };
    toggle.addEventListener('click', () => setOpen(toggle.getAttribute('aria-expanded') !== 'true'));
    const row = h('li', {class: `case ${c.s}`, 'data-case': c.n}, h('h3', {class: 'case-head'}, toggle), body);
    openers.set(row, setOpen);
    return row;
  }

  /** Each case row's `setOpen(open)`. */
  const openers = new WeakMap();

  /** One line under the name: what failed, then the size of the run. */
  function brief(c) {
    const [error, failed = [], calls = null, duration] = c.b;
    if (error) return `did not run: ${error}`;
    const parts = [];
    if (failed.length) parts.push(`failed: ${failed.slice(0, 3).join(', ')}${failed.length > 3 ? `, +${failed.length - 3}` : ''}`);
    if (calls !== null) parts.push(`${calls} call${calls === 1 ? '' : 's'}`);
    if (duration !== undefined) parts.push(AE.seconds(duration));
    return parts.join(' · ');
  }

  // -- a case's details -----------------------------------------------------------------------------

  function caseBody(body, c, data) {
    if (c.F) body.append(h('p', {class: 'case-error', role: 'note'}, h('strong', null, 'This case did not run: '), c.F));
    if (c.R.length) body.append(h('h4', null, 'Results'), resultsTable(c.R));
    const metrics = metricsLine(c.m);
    if (metrics) body.append(h('p', {class: 'case-metrics muted'}, metrics));
    if (c.X) body.append(h('h4', null, 'Expected against actual'), ...c.X.map(alignmentTable));
    if (!c.F) {
      body.append(h('h4', null, 'Timeline'));
      AE.append(body, c.T ? timeline(inSeconds(c.T)) : h('p', {class: 'no-timeline muted'}, data.no_timeline));
    }
    for (const [key, label] of [['in', 'Inputs'], ['out', 'Output'], ['exp', 'Expected output'], ['meta', 'Metadata']]) {
      if (c[key] !== undefined) body.append(h('details', {class: 'value'}, h('summary', null, label), h('pre', null, shownJson(c[key]))));
    }
    if (c.tr) body.append(h('p', {class: 'ids muted'}, `trace ${c.tr}`, c.sp ? ` · span ${c.sp}` : ''));
  }

  /** A value's JSON text (or any text) indented for reading, and shown as Python's `visible` shows text. */
  function shownJson(text) {
    return AE.visible(AE.prettyJson(text));
  }

  function resultsTable(results) {
    return h('table', {class: 'results'},
      h('thead', null, h('tr', null, ['Result', 'Evaluator', 'Value', 'Reason'].map((n) => h('th', {scope: 'col'}, n)))),
      h('tbody', null, results.map(([kind, name, value, reason, evaluator, mark]) =>
        h('tr', {class: mark === 1 ? 'failed' : null, 'data-result': name},
          h('th', {scope: 'row'}, name),
          h('td', {class: 'muted'}, evaluator && evaluator !== name ? evaluator : ''),
          h('td', {class: 'value'}, resultValue(kind, value, mark)),
          h('td', {class: 'reason'}, reason || '')))));
  }

  function resultValue(kind, value, mark) {
    if (kind === 'a') return badge(value ? 'pass' : 'fail', value ? 'pass' : 'fail');
    if (kind === 'e') return badge('warn', 'error');
    if (kind === 'g') return [badge('fail', 'gate'), ' ', value];
    if (kind === 'l') return h('span', {class: 'label-value'}, value);
    const shown = value === null ? 'n/a' : value.toFixed(3);
    if (mark === 1) return [h('span', {class: 'score'}, shown), ' ', badge('fail', 'below gate')];
    if (mark === 2) return [h('span', {class: 'score'}, shown), ' ', badge('warn', 'below min-score')];
    return h('span', {class: 'score'}, shown);
  }

  function metricsLine(m) {
    if (!m) return '';
    const parts = [];
    if (m.requests !== undefined) parts.push(`${AE.number(m.requests)} model requests`);
    if (m.input_tokens !== undefined) parts.push(`${AE.number(m.input_tokens)} input tokens`);
    if (m.output_tokens !== undefined) parts.push(`${AE.number(m.output_tokens)} output tokens`);
    if (m.cost !== undefined) parts.push(`cost ${AE.cost(m.cost)}`);
    if (m.duration !== undefined) parts.push(`took ${AE.seconds(m.duration)}`);
    return parts.join(' · ');
  }

  // -- alignments -----------------------------------------------------------------------------------

  function alignmentTable([result, evaluator, turn, rows]) {
    const title = [result, evaluator !== result ? ` (${evaluator})` : '', turn ? ` — turn ${turn}` : ''];
    return h('div', {class: 'alignment', 'data-alignment': result},
      h('h5', null, title),
      h('table', {class: 'align'},
        h('thead', null, h('tr', null, ['', 'Expected', 'Actual'].map((n) => h('th', {scope: 'col'}, n)))),
        h('tbody', null, rows.map(([status, expected, actual = expected, keys = [], differences = []]) =>
          h('tr', {class: `align-${status}`, 'data-status': status},
            h('td', {class: 'align-status'}, ALIGN_TEXT[status] || status),
            h('td', {class: 'mono'}, callText(expected, keys)),
            h('td', {class: 'mono'}, callText(actual, keys),
              differences.length ? h('ul', {class: 'differences'}, differences.map((d) => h('li', null, d))) : null))))));
  }

  /** `name(k=v, ...)` with the arguments named in `keys` marked (<mark>); the text unchanged otherwise. */
  function callText(text, keys) {
    if (text === null || text === undefined) return h('span', {class: 'muted'}, '—');
    const ranges = keys.map((key) => argumentRange(text, String(key).split(/[.[]/)[0])).filter(Boolean);
    ranges.sort((a, b) => a[0] - b[0]);
    const nodes = [];
    let at = 0;
    for (const [start, end] of ranges) {
      if (start < at) continue;
      nodes.push(text.slice(at, start), h('mark', null, text.slice(start, end)));
      at = end;
    }
    nodes.push(text.slice(at));
    return nodes;
  }

  /** Where `key=value` is in a call's text: after `(` or `, `, up to the next top-level `,` or `)`. */
  function argumentRange(text, key) {
    if (!key) return null;
    for (const before of ['(', ', ']) {
      const found = text.indexOf(`${before}${key}=`);
      if (found < 0) continue;
      const start = found + before.length;
      let depth = 0;
      let quote = null;
      for (let i = start + key.length + 1; i < text.length; i++) {
        const ch = text[i];
        if (quote) {
          if (ch === '\\') i++;
          else if (ch === quote) quote = null;
        } else if (ch === '"' || ch === "'") quote = ch;
        else if ('([{'.includes(ch)) depth++;
        else if (')]}'.includes(ch)) {
          if (depth === 0) return [start, i];
          depth--;
        } else if (ch === ',' && depth === 0) return [start, i];
      }
      return [start, text.length];
    }
    return null;
  }

  // -- the timeline ---------------------------------------------------------------------------------

  const ROW = 22; // px per sub-row of a lane's track (report.css agrees)
  const MIN_BAR = 8; // px: the narrowest call bar (report.css's min-width agrees)
  const MIN_FAILED = 16; // px: the narrowest failed call, wide enough for its stripes and its border at any scale
  const MIN_REQUEST = 4; // px: the narrowest request bar
  const GAP = 4; // px between a bar and the label beside it, and between the things in a sub-row
  const PAD = 8; // px a call bar needs around its label (padding and border)

  /** The timeline with its times in seconds (the payload has whole microseconds). */
  function inSeconds(T) {
    const s = (us) => (us === null ? null : us / 1e6);
    return {
      ...T,
      A: T.A.map(([lane, start, end]) => [lane, s(start), s(end)]),
      C: T.C.map((c) => [c[0], c[1], c[2], s(c[3]), s(c[4]), ...c.slice(5)]),
      Q: T.Q.map((q) => [q[0], q[1], s(q[2]), s(q[3]), ...q.slice(4)]),
    };
  }

  const hasTokens = (q) => q[4] !== null && q[4] !== undefined;

  function requestText(q) {
    const tokens = hasTokens(q) ? `${AE.number(q[4])} in / ${AE.number(q[5])} out tokens` : 'tokens not recorded';
    const cost = q[6] !== null && q[6] !== undefined ? `, ${AE.cost(q[6])}` : '';
    return `${q[1] || 'model'}: ${tokens}${cost}, ${AE.seconds(q[3] - q[2])}`;
  }

  function timeline(T) {
    const ends = [...T.A.map((a) => a[2]), ...T.C.map((c) => c[4]), ...T.Q.map((q) => q[3])];
    const total = Math.max(1e-6, ...ends);
    const place = (start, end) => ({
      left: `${(100 * start) / total}%`,
      width: `${(100 * Math.max(0, end - start)) / total}%`,
    });
    const order = laneOrder(T);
    const details = h('div', {class: 'call-details'});
    const callsTable = callTable(T, details);
    const wrap = h('div', {class: 'timeline', role: 'group', 'aria-label': 'Timeline'});
    const axis = h('div', {class: 'tl-track tl-axis'}, [0, 0.25, 0.5, 0.75, 1].map((f) =>
      h('span', {class: 'tl-tick', css: {left: `${100 * f}%`}}, AE.seconds(total * f))));
    wrap.append(h('div', {class: 'tl-row tl-axis-row', 'aria-hidden': 'true'}, h('div', {class: 'tl-label'}, ''), axis));
    const lanes = []; // what layoutTimeline places: per lane its track, call bars and request bars
    for (const lane of order) {
      const path = T.L[lane];
      const track = h('div', {class: 'tl-track', css: {height: `${2 * ROW}px`}});
      for (const a of T.A.filter((a) => a[0] === lane)) track.append(h('div', {class: 'tl-agent', css: place(a[1], a[2])}));
      const requests = [];
      for (const q of T.Q.filter((q) => q[0] === lane)) {
        const text = requestText(q);
        // No figure where the trace recorded no tokens (the title says so): never a made-up "0→0".
        const bar = h('div', {class: 'tl-request', css: place(q[2], q[3]), title: text, role: 'img', 'aria-label': `model request ${text}`},
          hasTokens(q) ? h('span', {class: 'tl-text'}, `${AE.number(q[4])}→${AE.number(q[5])}`) : null);
        requests.push({bar, start: q[2], end: q[3]});
        track.append(bar);
      }
      const calls = [];
      for (const [c, i] of T.C.map((c, i) => [c, i]).filter(([c]) => c[0] === lane)) {
        const status = STATUS[c[2]] || 'ok';
        const label = `${c[1]} (${status}, ${AE.seconds(c[4] - c[3])})`;
        const text = `${STATUS_TEXT[status].split(' ')[0]} ${c[1]}`;
        const bar = h('button', {
          type: 'button', class: `tl-call status-${status}`, 'data-call': i, title: label, 'aria-label': `tool call ${label}`,
          css: {...place(c[3], c[4]), top: `${ROW}px`},
        }, h('span', {class: 'tl-text'}, text));
        bar.addEventListener('click', () => callsTable.open(i, true));
        calls.push({bar, start: c[3], end: c[4], failed: status === 'failed'});
        track.append(bar);
      }
      lanes.push({track, calls, requests});
      const depth = path.length - 1;
      wrap.append(h('div', {class: 'tl-row tl-lane', 'data-lane': path.join(' › ') || '(no agent)'},
        h('div', {class: 'tl-label', title: path.join(' › '), css: {paddingLeft: `${0.3 + depth}rem`}},
          depth > 0 ? '↳ ' : '', path.length ? path[path.length - 1] : '(no agent)'),
        track));
    }
    // Laid out in pixels once the timeline has a width (it is built hidden), and again when the width
    // changes: the axis row's size changes with the width only, so the layout never resizes what is watched.
    let laidOut = -1;
    layouts.set(axis, (width) => {
      if (width <= 0 || width === laidOut) return;
      laidOut = width;
      layoutTimeline(lanes, total, width);
      wrap.dataset.laidOut = String(width);
    });
    resized.observe(axis);
    const parts = [wrap, h('p', {class: 'tl-legend muted'},
      'Bars: ', ...STATUS.map((s) => h('span', {class: `legend status-${s}`}, STATUS_TEXT[s])),
      ' · thin grey bars: model requests (input→output tokens, where the trace recorded them)')];
    if (T.o) parts.push(h('p', {class: 'muted'}, `${AE.number(T.o)} more calls and requests were left out of this timeline.`));
    if (T.C.length) parts.push(callsTable.element, details);
    if (T.Q.length) parts.push(requestsTable(T));
    return parts;
  }

  /** Each timeline's layout, by its axis track; one observer for every timeline. */
  const layouts = new WeakMap();
  const resized = new ResizeObserver((entries) => {
    for (const entry of entries) {
      if (!entry.target.isConnected) resized.unobserve(entry.target); // its row was drawn again (a filter)
      else layouts.get(entry.target)(Math.round(entry.contentRect.width));
    }
  });
  const measure = document.createElement('canvas').getContext('2d');

  /**
   * Place every bar of a timeline `width` pixels wide. A call's label goes inside its bar when it fits,
   * else beside it (on the side with room; cut with an ellipsis only when neither side has room for all
   * of it, the bar's title always has the whole name); a failed call is never narrower than MIN_FAILED.
   * Calls go in sub-rows, each call in the first where it and its label overlap nothing; a request's
   * figure shows only when its bar holds it whole.
   */
  function layoutTimeline(lanes, total, width) {
    const scale = width / total;
    const fonts = new Map(); // class name -> the font its text is measured in (read once per layout)
    const textWidth = (element) => {
      const kind = element.className.split(' ')[0];
      if (!fonts.has(kind)) {
        const style = getComputedStyle(element);
        fonts.set(kind, `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`);
      }
      measure.font = fonts.get(kind);
      return Math.ceil(measure.measureText(element.textContent).width);
    };
    for (const {track, calls, requests} of lanes) {
      const items = calls.map((call) => {
        const w = Math.min(width, Math.max(call.failed ? MIN_FAILED : MIN_BAR, (call.end - call.start) * scale));
        const x = Math.max(0, Math.min(call.start * scale, width - w)); // a bar at the very end stays inside
        const labelWidth = textWidth(call.bar);
        let side = 'inside';
        let room = null;
        let from = x;
        let to = x + w;
        if (labelWidth + PAD > w) {
          const need = GAP + labelWidth;
          const right = width - x - w;
          side = right >= need || right >= x ? 'right' : 'left';
          room = Math.max(right, x) - GAP;
          if (side === 'right') to = x + w + GAP + Math.min(labelWidth, room);
          else from = x - GAP - Math.min(labelWidth, room);
          if (labelWidth <= room) room = null;
        }
        return {call, x, w, side, room, from, to};
      });
      const rowEnds = [];
      for (const item of [...items].sort((a, b) => a.from - b.from)) {
        let row = rowEnds.findIndex((end) => end + GAP <= item.from);
        if (row < 0) row = rowEnds.push(0) - 1;
        rowEnds[row] = item.to;
        item.row = row;
      }
      for (const {call, x, w, side, room, row} of items) {
        Object.assign(call.bar.style, {left: `${x}px`, width: `${w}px`, top: `${(row + 1) * ROW}px`});
        call.bar.classList.toggle('tl-beside', side !== 'inside');
        call.bar.classList.toggle('tl-beside-left', side === 'left');
        call.bar.firstChild.style.maxWidth = room === null ? '' : `${Math.max(0, room)}px`;
      }
      track.style.height = `${(1 + Math.max(1, rowEnds.length)) * ROW}px`;
      for (const {bar, start, end} of requests) {
        // a figure cut to "12→" misleads: it shows whole or not at all (the title has it)
        if (bar.firstChild) bar.classList.toggle('tl-bare', textWidth(bar) + PAD > Math.max(MIN_REQUEST, (end - start) * scale));
      }
    }
  }

  /**
   * Lanes as a tree in time order: the agents that started first on top, each sub-agent's lane right
   * under its parent's. A lane sorts by the start of each of its ancestors in turn (the earliest
   * start of anything under that prefix of its path), then by name.
   */
  function laneOrder(T) {
    const firsts = T.L.map(() => Infinity);
    const seen = (lane, start) => { firsts[lane] = Math.min(firsts[lane], start); };
    for (const a of T.A) seen(a[0], a[1]);
    for (const c of T.C) seen(c[0], c[3]);
    for (const q of T.Q) seen(q[0], q[2]);
    const under = new Map(); // path prefix (joined) -> earliest start below it
    T.L.forEach((path, lane) => {
      for (let i = 1; i <= path.length; i++) {
        const key = JSON.stringify(path.slice(0, i));
        under.set(key, Math.min(under.has(key) ? under.get(key) : Infinity, firsts[lane]));
      }
    });
    const keys = T.L.map((path) => path.map((name, i) => [under.get(JSON.stringify(path.slice(0, i + 1))), name]));
    const compare = (a, b) => {
      for (let i = 0; i < Math.min(a.length, b.length); i++) {
        if (a[i][0] !== b[i][0]) return a[i][0] - b[i][0];
        if (a[i][1] !== b[i][1]) return a[i][1] < b[i][1] ? -1 : 1;
      }
      return a.length - b.length;
    };
    return T.L.map((path, lane) => lane).sort((a, b) => compare(keys[a], keys[b]));
  }

  function callTable(T, details) {
    const opened = new Map(); // call index -> [button, detail row]
    const body = h('tbody');
    T.C.forEach((c, i) => {
      const status = STATUS[c[2]] || 'ok';
      const button = h('button', {type: 'button', class: 'call-toggle', 'aria-expanded': 'false'}, c[1]);
      const row = h('tr', {class: `call status-row-${status}`, 'data-call': i},
        h('td', {class: 'num'}, i + 1),
        h('td', null, T.L[c[0]].join(' › ') || '(no agent)'),
        h('th', {scope: 'row'}, button),
        h('td', null, h('span', {class: `status status-${status}`}, STATUS_TEXT[status]),
          c[8] ? h('span', {class: 'muted'}, ' (output function)') : null),
        h('td', {class: 'num'}, AE.seconds(c[3])),
        h('td', {class: 'num'}, AE.seconds(c[4] - c[3])));
      const detail = h('tr', {class: 'call-detail', hidden: true}, h('td', {colspan: 6})); // filled when first opened
      button.addEventListener('click', () => open(i, false));
      opened.set(i, [button, detail, c]);
      body.append(row, detail);
    });
    function open(i, fromBar) {
      const [button, detail, c] = opened.get(i);
      const show = fromBar || detail.hidden;
      if (show && !detail.firstChild.firstChild) detail.firstChild.append(callDetail(c));
      detail.hidden = !show;
      button.setAttribute('aria-expanded', String(show));
      if (fromBar) {
        detail.scrollIntoView({block: 'nearest'});
        button.focus({preventScroll: true});
      }
    }
    const element = h('table', {class: 'calls'},
      h('caption', {class: 'muted'}, 'Tool calls (open one for its arguments and result)'),
      h('thead', null, h('tr', null, ['#', 'Agent', 'Tool', 'Status', 'Start', 'Duration'].map((n) => h('th', {scope: 'col'}, n)))),
      body);
    return {element, open};
  }

  function callDetail(c) {
    const parts = [];
    parts.push(h('div', {class: 'call-part'}, h('h6', null, 'Arguments'),
      c[5] === null || c[5] === undefined ? h('p', {class: 'muted'}, 'not recorded') : h('pre', {class: 'arguments'}, shownJson(c[5]))));
    const label = c[2] === 1 ? 'Error' : 'Result';
    parts.push(h('div', {class: 'call-part'}, h('h6', null, label),
      c[6] === null || c[6] === undefined ? h('p', {class: 'muted'}, 'not recorded') : h('pre', {class: 'result'}, shownJson(c[6]))));
    if (c[7]) parts.push(h('p', {class: 'muted'}, `failed at: ${c[7]}`));
    return h('div', {class: 'call-parts'}, parts);
  }

  function requestsTable(T) {
    let input = 0;
    let output = 0;
    let counted = 0;
    for (const q of T.Q) {
      if (!hasTokens(q)) continue;
      input += q[4];
      output += q[5];
      counted++;
    }
    const n = T.Q.length;
    let tokens = `${AE.number(input)} input tokens, ${AE.number(output)} output tokens`;
    if (!counted) tokens = 'tokens not recorded';
    else if (counted < n) tokens += ` (${AE.number(n - counted)} without token counts)`;
    const notRecorded = h('span', {class: 'muted'}, 'not recorded');
    return h('details', {class: 'requests'},
      h('summary', null, `${n} model request${n === 1 ? '' : 's'}: ${tokens}`),
      table(['Model', 'Agent', 'Start', 'Duration', 'Input tokens', 'Output tokens', 'Cost'], T.Q.map((q) => [
        q[1] || '—', T.L[q[0]].join(' › ') || '(no agent)', AE.seconds(q[2]), AE.seconds(q[3] - q[2]),
        hasTokens(q) ? AE.number(q[4]) : notRecorded.cloneNode(true), hasTokens(q) ? AE.number(q[5]) : notRecorded.cloneNode(true),
        q[6] === null || q[6] === undefined ? '—' : AE.cost(q[6]),
      ])));
  }
})();
