"""One self-contained HTML page: a title, a JSON payload, CSS and JS in a single file.

The HTML views (`html.py`, the report; the comparison view) share this shell. The page needs no
network (no CDN, no fonts, no images from anywhere) and works opened from disk (`file://`):

- the payload is embedded as data, never as code: `<script type="application/json"
  id="payload">` with every `<`, `>` and `&` written as a JSON `\\u` escape, so no text in it can
  close the element or open a comment (`</script>`, `<!--`); a large payload is gzip-compressed
  and base64-encoded instead (`type="application/gzip-base64"`), and the page inflates it with the
  browser's own `DecompressionStream`;
- a large page can be split: the payload (`id="payload"`) then holds what the page draws first,
  and further parts (`parts=`, each its own `<script class="payload-part">`, compressed or not by
  the same rule) come after the page's script, so the browser parses, runs and paints the script's
  first drawing before it reaches them; `AE.parts()` reads them once the document is parsed. The
  parts are compressed in worker threads while the next part is made (zlib compresses without the
  GIL), which hides most of the compression on a machine with a core to spare; `page_chunks` gives
  the page a part at a time, with only a few parts in the making, so a page of a million cases is
  written without being whole in memory;
- a Content-Security-Policy allows only this page's own style and script elements (by their
  SHA-256 hashes) and no fetch, image, font, frame or form target at all, so even a string that
  somehow became markup could load or run nothing (no `eval` either: a test driving the page
  polls with Playwright's `expect`, not `wait_for_function`, which evaluates a string); the data
  elements are not scripts (their types are not JavaScript), so the policy needs no hash for them;
- the shared assets in `html_assets/` (`base.css`, `page.js`) come first: `page.js` defines `AE`,
  with `AE.payload()` (a promise of the parsed payload, whichever way it was embedded),
  `AE.parts()` and `AE.h(...)`, which builds DOM elements with text set through `textContent`,
  never markup.

Lone surrogates (which UTF-8 cannot encode) travel as JSON escapes and read back as the same text.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
import os
import re
import zlib
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from importlib.resources import files

PAYLOAD_ID = 'payload'
"""The `id` of the payload's `<script>` element (what `AE.payload()` reads)."""
PART_CLASS = 'payload-part'
"""The `class` of each further part's `<script>` element (what `AE.parts()` reads)."""
COMPRESS_ABOVE = 512 * 1024
"""Payloads (and parts) of more JSON characters than this are embedded gzip-compressed (base64), by default."""
COMPRESS_LEVEL = 4
"""The gzip level: at 4 of 9, 10,000 cases make a file about 15% larger than at 6 in about 60% of the time
(docs/html-report.md has the figures)."""
SHARED_CSS = ('base.css',)
SHARED_JS = ('page.js',)

_KINDS = 'application/json|application/gzip-base64'
_UNSAFE_WIDE = re.compile('[\u2028\u2029\ud800-\udfff]')


def asset(name: str) -> str:
    """The text of `html_assets/<name>` (package data, shipped in the wheel)."""
    return _read_asset(name)


@cache
def _read_asset(name: str) -> str:
    return files(__package__).joinpath('html_assets').joinpath(name).read_text(encoding='utf-8')


def payload_json(payload: object) -> str:
    """`payload` as compact JSON text that is safe inside a `<script>` element (and valid JSON).

    `<`, `>`, `&`, U+2028/U+2029 and lone surrogates are written as `\\uXXXX` escapes; they only ever
    occur inside JSON strings, where an escape reads back as the same character.
    """
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, separators=(',', ':'))
    # str.replace is many times quicker than a regex over tens of megabytes
    text = text.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026')
    if not text.isascii():
        text = _UNSAFE_WIDE.sub(lambda m: f'\\u{ord(m[0]):04x}', text)
    return text


def render_page(
    title: str,
    payload: object,
    *,
    parts: Iterable[object] = (),
    css: Sequence[str] = (),
    js: Sequence[str] = (),
    body: str = '',
    compress: bool | None = None,
    lang: str = 'en',
) -> str:
    """The whole HTML document (`page_chunks`, joined).

    `payload` is any JSON-serialisable value (or JSON text already made). `parts` are further values
    (or JSON texts), embedded after the page's script in order: the page's first drawing should need
    only `payload`. `css` and `js` are the page's own stylesheets and scripts as text (`asset(name)`
    reads a shared one), added after the shared `base.css` and `page.js`. `body` is static markup for
    the page's skeleton: it must not hold data (data goes in the payload and reaches the page through
    `textContent`). `compress`: gzip the payload and each part (default: each one larger than
    `COMPRESS_ABOVE`).
    """
    return ''.join(page_chunks(title, payload, parts=parts, css=css, js=js, body=body, compress=compress, lang=lang))


def page_chunks(
    title: str,
    payload: object,
    *,
    parts: Iterable[object] = (),
    css: Sequence[str] = (),
    js: Sequence[str] = (),
    body: str = '',
    compress: bool | None = None,
    lang: str = 'en',
) -> Iterator[str]:
    """`render_page`'s text a piece at a time: the page up to its script, then each part's element as it
    is made (`parts` is read lazily), then the end."""
    styles = [asset(name) for name in SHARED_CSS] + list(css)
    scripts = [asset(name) for name in SHARED_JS] + list(js)
    style = '\n' + '\n'.join(styles) + '\n'  # exactly the element's content: its hash is in the policy
    script = '\n' + '\n'.join(scripts) + '\n'
    for text, what in ((style, 'CSS'), (script, 'JS')):
        if re.search(r'</(style|script)', text, re.IGNORECASE):
            raise ValueError(f'the page {what} contains a closing tag, which would end its element')
    policy = '; '.join(
        [
            "default-src 'none'",
            f"style-src '{_sha256(style)}'",
            f"script-src '{_sha256(script)}'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    data_element = _data_element(payload_json(payload), f'id="{PAYLOAD_ID}"', compress)
    yield (
        '<!DOCTYPE html>\n'
        f'<html lang="{html.escape(lang)}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f'<title>{html.escape(title, quote=False)}</title>\n'
        f'<style>{style}</style>\n</head>\n<body>\n{body}\n{data_element}\n'
        f'<script>{script}</script>\n'
    )
    for element in _part_elements(parts, compress):
        yield element
        del element  # not held while the next part is made
        yield '\n'
    yield '</body>\n</html>\n'


def _data_element(data: str, attribute: str, compress: bool | None) -> str:
    if compress is None:
        compress = len(data) > COMPRESS_ABOVE
    if compress:
        return f'<script type="application/gzip-base64" {attribute}>{_pack(data)}</script>'
    return f'<script type="application/json" {attribute}>{data}</script>'


def _part_elements(parts: Iterable[object], compress: bool | None) -> Iterator[str]:
    """Each part's element, in order; compressed ones in worker threads, each while the next parts are
    made, with at most `2 * workers` of them in the making (so memory does not grow with the parts)."""
    attribute = f'class="{PART_CLASS}"'
    workers = max(1, min(4, (os.cpu_count() or 1) - 1))
    pending: deque[str | Future[str]] = deque()
    pool: ThreadPoolExecutor | None = None
    try:
        for part in parts:
            data = payload_json(part)
            del part
            if compress or (compress is None and len(data) > COMPRESS_ABOVE):
                if pool is None:
                    pool = ThreadPoolExecutor(max_workers=workers)
                pending.append(pool.submit(_data_element, data, attribute, True))
            else:
                pending.append(_data_element(data, attribute, False))
            del data
            while pending and (isinstance(pending[0], str) or pending[0].done() or len(pending) > 2 * workers):
                yield _made(pending.popleft())
        while pending:
            yield _made(pending.popleft())
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _made(element: str | Future[str]) -> str:
    return element if isinstance(element, str) else element.result()


def _pack(data: str) -> str:
    """`data` as UTF-8, gzip-compressed (no file name, time 0: the same text gives the same page), base64."""
    deflate = zlib.compressobj(COMPRESS_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    packed = deflate.compress(data.encode('utf-8')) + deflate.flush()
    return base64.b64encode(packed).decode('ascii')


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode('utf-8')).digest()
    return 'sha256-' + base64.b64encode(digest).decode('ascii')


def read_payload(page: str) -> object:
    """The payload embedded in a page made by `render_page` (for tests and tools), parsed."""
    match = re.search(rf'<script type="({_KINDS})" id="{PAYLOAD_ID}">(.*?)</script>', page, re.DOTALL)
    if match is None:
        raise ValueError('no payload in this page')
    return _read(*match.groups())


def read_parts(page: str) -> list[object]:
    """The further parts embedded in a page made by `render_page`, parsed, in order (none: `[]`)."""
    found = re.finditer(rf'<script type="({_KINDS})" class="{PART_CLASS}">(.*?)</script>', page, re.DOTALL)
    return [_read(*match.groups()) for match in found]


def _read(kind: str, text: str) -> object:
    if kind == 'application/gzip-base64':
        text = gzip.decompress(base64.b64decode(text)).decode('utf-8')
    return json.loads(text)
