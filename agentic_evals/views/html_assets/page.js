'use strict';
/* Shared by the agentic-evals HTML pages (views/html_page.py). Plain JS: no build step, no
   dependencies, no network. Data reaches the page only as text (textContent, text nodes,
   setAttribute), never as markup: `AE.h` is the one way elements are built. */
const AE = (() => {
  /** The page's embedded payload, parsed (a promise: a compressed payload is inflated first). */
  async function payload(id = 'payload') {
    return decode(document.getElementById(id));
  }

  /**
   * The page's further parts (the `script.payload-part` elements after the page's script), parsed, in
   * order: a promise, settled once the document is parsed and every part read. Each part is parsed
   * in a task of its own, so the page stays responsive; `onPart(value, index, count)` follows each.
   */
  async function parts(onPart) {
    if (document.readyState === 'loading') {
      await new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve, {once: true}));
    }
    const elements = [...document.querySelectorAll('script.payload-part')];
    const values = [];
    for (const element of elements) {
      await new Promise((resolve) => setTimeout(resolve, 0)); // a task of its own: input and paint come first
      values.push(await decode(element));
      if (onPart) onPart(values[values.length - 1], values.length - 1, elements.length);
    }
    return values;
  }

  async function decode(element) {
    if (element.type !== 'application/gzip-base64') return JSON.parse(element.textContent);
    const text = element.textContent.trim();
    let bytes;
    if (typeof Uint8Array.fromBase64 === 'function') {
      bytes = Uint8Array.fromBase64(text);
    } else {
      const binary = atob(text);
      bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return JSON.parse(await new Response(stream).text());
  }

  // Attributes that could load or run something: never set from h() props.
  const FORBIDDEN = new Set(['href', 'src', 'srcdoc', 'action', 'formaction', 'style', 'innerHTML', 'outerHTML']);

  /**
   * A new element: `h('li', {class: 'case', 'aria-expanded': 'false', onclick: fn}, child, ...)`.
   * Props: `class`, `text` (textContent), `on<event>` (a listener), `css` (an object of style
   * properties, set through the CSSOM), anything else an attribute (`true` sets it empty; null,
   * undefined and false skip it). Children: nodes, or strings and numbers (text nodes); arrays are
   * flattened, null and false skipped.
   */
  function h(tag, props, ...children) {
    const element = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') element.className = value;
      else if (key === 'text') element.textContent = String(value);
      else if (key === 'css') Object.assign(element.style, value);
      else if (key.startsWith('on') && typeof value === 'function') element.addEventListener(key.slice(2), value);
      else if (FORBIDDEN.has(key) || key.startsWith('on')) throw new Error(`h(): attribute ${key} is not allowed`);
      else element.setAttribute(key, value === true ? '' : String(value));
    }
    append(element, children);
    return element;
  }

  /** Append children (nodes, or values shown as text) to `parent`. */
  function append(parent, children) {
    for (const child of [children].flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return parent;
  }

  /** A number as a person reads it: integers with separators, others to `digits` decimals (trailing 0s cut). */
  function number(value, digits = 3) {
    if (value === null || value === undefined || Number.isNaN(value)) return 'n/a';
    if (Number.isInteger(value)) return value.toLocaleString('en-US');
    return Number(value.toFixed(digits)).toLocaleString('en-US', {maximumFractionDigits: digits});
  }

  /** A fraction (0..1) as a percentage with one decimal: 0.3333 -> "33.3%". */
  function percent(value) {
    return value === null || value === undefined ? 'n/a' : `${(value * 100).toFixed(1)}%`;
  }

  /** Seconds as "850 µs", "12.3 ms" or "1.25 s". */
  function seconds(value) {
    if (value === null || value === undefined) return 'n/a';
    if (value < 0.001) return `${Math.round(value * 1e6)} µs`;
    if (value < 1) return `${Number((value * 1000).toPrecision(3))} ms`;
    return `${Number(value.toPrecision(3))} s`;
  }

  /** A cost in dollars with enough decimals to see small ones. */
  function cost(value) {
    if (value === null || value === undefined) return 'n/a';
    return `$${value >= 1 ? value.toFixed(2) : Number(value.toPrecision(3))}`;
  }

  // What Python's `visible` (views/text.py) escapes: C0 controls but tab and newline, DEL and C1
  // controls, bidirectional embeddings, overrides and isolates, lone surrogates (the `u` flag makes a
  // surrogate pair one character, so only a lone half matches) and U+FFFE, U+FFFF.
  const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u{d800}-\u{dfff}\ufffe\uffff]/gu;

  /**
   * `text` with every control, bidi and lone surrogate character escaped as Python's `visible` does
   * (`\x1b`, `\r`, `\u202e`, `\ud800`); newlines kept. The payload's strings are made visible before
   * the page gets them: this is for text the page makes from them (an indented value, say).
   */
  function visible(text) {
    return String(text).replace(HIDDEN, (ch) => {
      if (ch === '\r') return '\\r';
      const code = ch.charCodeAt(0);
      return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    });
  }

  /**
   * JSON text indented for reading when it parses as an object or array; anything else as it was.
   * The text itself is re-indented, not parsed and printed again, so numbers keep their spelling
   * (`250.0` stays `250.0`, a 20-digit integer keeps every digit), and escapes stay escapes
   * (`"\u202e"` is shown as those six characters). Show it through `visible`, as any text made from data.
   */
  function prettyJson(text) {
    if (typeof text !== 'string') return text;
    const trimmed = text.trim();
    if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
    try {
      JSON.parse(trimmed);
    } catch (e) {
      return text;
    }
    let out = '';
    let depth = 0;
    const newline = () => '\n' + '  '.repeat(depth);
    for (let i = 0; i < trimmed.length; i++) {
      const ch = trimmed[i];
      if (ch === '"') { // a string, copied as it is (escapes included)
        let j = i + 1;
        while (trimmed[j] !== '"') j += trimmed[j] === '\\' ? 2 : 1;
        out += trimmed.slice(i, j + 1);
        i = j;
      } else if (ch === '{' || ch === '[') {
        const close = ch === '{' ? '}' : ']';
        let j = i + 1;
        while (' \t\n\r'.includes(trimmed[j])) j++;
        if (trimmed[j] === close) { // empty: {} or []
          out += ch + close;
          i = j;
        } else {
          depth++;
          out += ch + newline();
        }
      } else if (ch === '}' || ch === ']') {
        depth--;
        out += newline() + ch;
      } else if (ch === ',') {
        out += ',' + newline();
      } else if (ch === ':') {
        out += ': ';
      } else if (!' \t\n\r'.includes(ch)) {
        out += ch;
      }
    }
    return out;
  }

  /** `f` called once `ms` after the last of a burst of calls (typing in a search box). */
  function debounce(f, ms = 150) {
    let timer = null;
    return (...args) => {
      clearTimeout(timer);
      timer = setTimeout(() => f(...args), ms);
    };
  }

  /**
   * Render `items` into `container` a batch at a time: the first batch now, the next whenever the
   * "Show more" button after the list comes near the viewport (or is pressed). A long list costs
   * only what was scrolled to. Returns {shown(): count, reset(items): start again with new items,
   * extend(items): the same list made longer (`items` begins with the items drawn, whose rows stay)}.
   */
  function lazyList(container, items, render, batch = 100) {
    let shown = 0;
    let current = items;
    const more = h('button', {type: 'button', class: 'more', onclick: () => next()});
    container.after(more);
    const observer = new IntersectionObserver(
      (entries) => { if (entries.some((e) => e.isIntersecting)) next(); },
      {rootMargin: '600px'},
    );
    function next() {
      const fragment = document.createDocumentFragment();
      const end = Math.min(current.length, shown + batch);
      for (; shown < end; shown++) fragment.append(render(current[shown], shown));
      container.append(fragment);
      update();
    }
    function update() {
      more.hidden = shown >= current.length;
      more.textContent = `Show more (${(current.length - shown).toLocaleString('en-US')} more)`;
      // Observing again asks for a fresh intersection report: if the button is still in view after
      // this batch (short rows, a tall window), the next batch follows without a scroll.
      observer.unobserve(more);
      if (!more.hidden) observer.observe(more);
    }
    function reset(items) {
      current = items;
      shown = 0;
      container.replaceChildren();
      next();
    }
    function extend(items) {
      current = items;
      update();
    }
    next();
    return {shown: () => shown, reset, extend};
  }

  /** Show a message in place of the page when it cannot be drawn (a broken payload, say). */
  function fail(error) {
    document.body.replaceChildren(h('p', {class: 'page-error', role: 'alert'}, `This report cannot be shown: ${error}`));
    throw error;
  }

  return {payload, parts, h, append, number, percent, seconds, cost, visible, prettyJson, debounce, lazyList, fail};
})();
