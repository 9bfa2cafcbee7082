"""`dump --html`: one self-contained page with the file's bytes beside its field tree, the way
the Kaitai Web IDE shows a file against its .ksy.

The field tree is built from the hex-dump walker's leaves (`hexdump.fields`), grouped by their
paths (`columns[0].indexes[1].blob` sits under `columns[0]` / `indexes[1]`), in the order the
parser met them. The bytes travel as base64 inside the page and a small script lays out the
hex rows near the viewport (a file of megabytes opens at once), colours each field's bytes,
and links both sides: hovering a field lights its bytes, hovering a byte lights the innermost
field holding it, clicking selects and scrolls the other side. No network, no external file:
the page works saved anywhere, and without the script the tree still reads (paths, offsets,
sizes, values).
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from paimon_schema.cli.hexdump import Field

#: Bytes carried in the page unless told otherwise (base64: a third more); the hex view lays
#: out only the rows near the viewport, so this bounds the page's size, not its speed.
DEFAULT_LIMIT = 16 * 1024 * 1024


@dataclass
class _Node:
    """A group of the tree (`columns[0]`) or a leaf field; `index` numbers leaves."""

    name: str
    children: dict[str, _Node] = field(default_factory=dict)
    leaf: Field | None = None
    index: int = -1
    start: int | None = None
    end: int | None = None

    def cover(self, start: int, end: int) -> None:
        self.start = start if self.start is None else min(self.start, start)
        self.end = end if self.end is None else max(self.end, end)


def _steps(path: str) -> list[str]:
    """`columns[0].indexes[1].blob` -> columns, [0], indexes, [1], blob."""
    out = []
    for part in path.split("."):
        name, bracket, rest = part.partition("[")
        if name:
            out.append(name)
        if bracket:
            out.extend(f"[{i}" for i in rest.split("[") if i)
    return out


def _tree(fields: Sequence[Field]) -> _Node:
    root = _Node("")
    for i, f in enumerate(fields):
        node, trail = root, [root]
        for step in _steps(f.path):
            node = node.children.setdefault(step, _Node(step))
            trail.append(node)
        node.leaf, node.index = f, i
        if f.offset is not None:
            for n in trail:
                n.cover(f.offset, f.offset + f.size)
    return root


def _span(node: _Node) -> str:
    if node.start is None or node.end is None:      # `cover` sets both or neither
        return ""
    return f' data-o="{node.start}" data-n="{node.end - node.start}"'


def _where(node: _Node) -> str:
    if node.start is None or node.end is None:
        return '<span class="at">derived</span>'
    size = node.end - node.start
    return f'<span class="at">@{node.start:#x} +{size}</span>'


def _tree_html(node: _Node, show: Callable[[Any, int], str], out: list[str]) -> None:
    for child in node.children.values():
        label = html.escape(child.name)
        if child.leaf is not None and not child.children:
            value = html.escape(show(child.leaf.value, child.leaf.size))
            out.append(f'<li class="leaf" data-f="{child.index}"{_span(child)}>'
                       f'<span class="name">{label}</span> {_where(child)} '
                       f'<span class="value">{value}</span></li>')
            continue
        out.append(f'<li class="group"{_span(child)}><details open><summary>'
                   f'<span class="name">{label}</span> {_where(child)}</summary><ul>')
        if child.leaf is not None:          # a field that is also a group: shown first
            value = html.escape(show(child.leaf.value, child.leaf.size))
            out.append(f'<li class="leaf" data-f="{child.index}"{_span(child)}>'
                       f'<span class="name">=</span> <span class="value">{value}</span></li>')
        _tree_html(child, show, out)
        out.append("</ul></details></li>")


def render_html(title: str, data: bytes, fields: Sequence[Field], *,
                show: Callable[[Any, int], str] | None = None,
                limit: int | None = DEFAULT_LIMIT) -> str:
    """The page for `data` and its `fields` (from `hexdump.fields`); `limit` caps the bytes
    the page carries for the hex view (None: all), the tree always lists every field."""
    if show is None:
        from paimon_schema.cli.hexdump import show_value

        show = show_value
    shown = len(data) if limit is None else min(len(data), limit)
    tree: list[str] = []
    _tree_html(_tree(fields), show, tree)
    leaves = [[f.offset, f.size] if f.offset is not None else None for f in fields]
    payload = json.dumps({"size": len(data), "shown": shown, "fields": leaves},
                         separators=(",", ":"))
    note = "" if shown == len(data) else (
        f'<p class="note">hex view: the first {shown:,} of {len(data):,} bytes '
        f'(<code>--all</code> shows every byte)</p>')
    return _PAGE.format(
        title=html.escape(title), size=f"{len(data):,}", count=f"{len(fields):,}", note=note,
        tree="".join(tree), payload=payload.replace("</", "<\\/"),
        data=base64.b64encode(bytes(data[:shown])).decode("ascii"), style=_STYLE, script=_SCRIPT)


_STYLE = """
*{box-sizing:border-box}
body{margin:0;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:#222;
 background:#fff;height:100vh;display:flex;flex-direction:column}
header{padding:6px 12px;background:#263238;color:#eceff1}
header b{color:#fff}
#status{padding:3px 12px;background:#eceff1;min-height:1.6em;white-space:pre}
.note{margin:4px 12px;color:#8a4b00}
main{flex:1;display:flex;min-height:0}
#hex{flex:0 0 auto;overflow:auto;padding:6px 12px;border-right:1px solid #cfd8dc}
#rows{position:relative;min-width:78ch}
#win{position:absolute;left:0;right:0}
#tree{flex:1;overflow:auto;padding:6px 12px}
.row{white-space:pre;height:19px;line-height:19px}
.off{color:#90a4ae;margin-right:1ch}
.b,.pad{display:inline-block;width:3ch;text-align:center;cursor:pointer}
.a{display:inline-block;width:1ch;cursor:pointer}
.asc{margin-left:2ch;color:#455a64}
.c0{background:#e3f2fd}.c1{background:#fff3e0}.c2{background:#e8f5e9}.c3{background:#f3e5f5}
.b.hl,.a.hl{background:#ffd54f;color:#000}
.b.sel,.a.sel{outline:1px solid #e65100}
ul{list-style:none;margin:0;padding-left:2ch}
#tree>ul{padding-left:0}
li.leaf,summary{cursor:pointer;border-radius:3px;padding:0 3px}
li.leaf.hl,li.group.hl>details>summary{background:#ffd54f}
li.leaf.sel,li.group.sel>details>summary{outline:1px solid #e65100}
.name{color:#0d47a1}.at{color:#90a4ae}.value{color:#1b5e20}
"""

_SCRIPT = r"""
(function () {
  const meta = JSON.parse(document.getElementById("meta").textContent);
  const raw = atob(document.getElementById("bytes").textContent.trim());
  const hex = document.getElementById("hex");
  const rows = document.getElementById("rows");
  const win = document.getElementById("win");
  const status = document.getElementById("status");
  const ROW = 19, MARGIN = 40;                            // px per row; rows kept off screen
  const nrows = Math.ceil(raw.length / 16);
  const owner = new Int32Array(raw.length).fill(-1);      // byte -> innermost leaf
  const order = meta.fields.map((f, i) => [f, i]).filter(p => p[0] && p[0][1] > 0)
    .sort((p, q) => q[0][1] - p[0][1]);                    // widest first: inner ones win
  for (const [[o, n], i] of order) {
    for (let k = o; k < Math.min(o + n, raw.length); k++) owner[k] = i;
  }
  const colour = new Map();
  meta.fields.forEach((f, i) => { if (f && f[1] > 0) colour.set(i, colour.size % 4); });
  const hexByte = [], ascByte = [];
  for (let c = 0; c < 256; c++) {
    hexByte.push(c.toString(16).padStart(2, "0"));
    ascByte.push(c >= 32 && c < 127 ? String.fromCharCode(c).replace("&", "&amp;")
      .replace("<", "&lt;").replace(">", "&gt;") : ".");
  }
  const state = {hl: [0, 0], sel: [0, 0], first: -1, last: -1};
  rows.style.height = (nrows * ROW) + "px";

  // Only the rows near the viewport exist: a file of any size opens at once.
  function render(force) {
    const first = Math.max(0, Math.floor(hex.scrollTop / ROW) - MARGIN);
    const last = Math.min(nrows, Math.ceil((hex.scrollTop + hex.clientHeight) / ROW) + MARGIN);
    if (!force && first === state.first && last === state.last) return;
    state.first = first; state.last = last;
    const [ho, hn] = state.hl, [so, sn] = state.sel;
    const out = [];
    for (let r = first; r < last; r++) {
      let bytes = "", chars = "";
      for (let k = r * 16; k < Math.min(r * 16 + 16, raw.length); k++) {
        const c = raw.charCodeAt(k);
        let cls = owner[k] >= 0 ? " c" + colour.get(owner[k]) : "";
        if (k >= ho && k < ho + hn) cls += " hl";
        if (k >= so && k < so + sn) cls += " sel";
        bytes += '<span class="b' + cls + '" data-i="' + k + '">' + hexByte[c] + "</span>";
        chars += '<span class="a' + cls + '" data-i="' + k + '">' + ascByte[c] + "</span>";
      }
      const pad = r * 16 + 16 > raw.length ? '<span class="pad"></span>'.repeat(r * 16 + 16 - raw.length) : "";
      out.push('<div class="row"><span class="off">' + (r * 16).toString(16).padStart(8, "0") +
               "</span>" + bytes + pad + '<span class="asc">' + chars + "</span></div>");
    }
    win.style.top = (first * ROW) + "px";
    win.innerHTML = out.join("");
    shown.base = first * 16;
    shown.b = win.querySelectorAll(".b");
    shown.a = win.querySelectorAll(".a");
  }
  const shown = {base: 0, b: [], a: []};          // the laid-out cells, from byte `base` on
  function paint(cls, [o, n], on) {               // (un)light a range's laid-out cells only
    const from = Math.max(o, shown.base), to = Math.min(o + n, shown.base + shown.b.length);
    for (let k = from; k < to; k++) {
      shown.b[k - shown.base].classList.toggle(cls, on);
      shown.a[k - shown.base].classList.toggle(cls, on);
    }
  }
  hex.addEventListener("scroll", () => render(false));

  const leafOf = new Map();
  document.querySelectorAll("#tree li.leaf").forEach(li => leafOf.set(+li.dataset.f, li));
  function describe(node) {
    const path = [];
    for (let e = node; e && e.id !== "tree"; e = e.parentElement) {
      if (e.tagName === "LI") path.unshift(e.querySelector(".name").textContent);
    }
    const at = node.dataset.o === undefined ? "derived value" :
      "offset " + node.dataset.o + " (0x" + (+node.dataset.o).toString(16) + "), " +
      node.dataset.n + " bytes";
    return path.join(".").replace(/\.\[/g, "[").replace(/\.=$/, "") + "  " + at;
  }
  function range(node) {
    return node && node.dataset.o !== undefined ? [+node.dataset.o, +node.dataset.n] : [0, 0];
  }
  function mark(cls, node) {
    document.querySelectorAll("#tree ." + cls).forEach(e => e.classList.remove(cls));
    if (node) node.classList.add(cls);
    paint(cls, state[cls], false);
    state[cls] = range(node);
    paint(cls, state[cls], true);
  }
  // Scroll the hex view so that byte k is shown (and laid out) now.
  function reveal(k) {
    const row = Math.floor(k / 16);
    if (row * ROW < hex.scrollTop || (row + 1) * ROW > hex.scrollTop + hex.clientHeight) {
      hex.scrollTop = Math.max(0, row * ROW - hex.clientHeight / 3);
    }
    render(false);
  }
  function fieldAt(k) { return owner[k] >= 0 ? leafOf.get(owner[k]) : null; }
  function open(node) {
    for (let e = node; e; e = e.parentElement) if (e.tagName === "DETAILS") e.open = true;
  }
  const tree = document.getElementById("tree");
  tree.addEventListener("mouseover", ev => {
    const node = ev.target.closest("li");
    if (!node) return;
    status.textContent = describe(node);
    mark("hl", node);
  });
  tree.addEventListener("click", ev => {
    const node = ev.target.closest("li");
    if (!node) return;
    if (node.dataset.o !== undefined && +node.dataset.o < raw.length) reveal(+node.dataset.o);
    mark("sel", node);
  });
  hex.addEventListener("mouseover", ev => {
    const k = ev.target.dataset.i;
    if (k === undefined) return;
    const node = fieldAt(+k);
    if (node) { status.textContent = describe(node); mark("hl", node); }
    else { mark("hl", null); status.textContent = "offset " + k + ": no field"; }
  });
  hex.addEventListener("click", ev => {
    const k = ev.target.dataset.i;
    const node = k === undefined ? null : fieldAt(+k);
    if (!node) return;
    open(node);
    mark("sel", node);
    node.scrollIntoView({block: "nearest"});
  });
  render(true);
  window.paimonHex = {reveal: reveal};      // for scripts driving the page (tests)
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><style>{style}</style></head>
<body>
<header><b>{title}</b> &middot; {size} bytes &middot; {count} fields</header>
{note}<div id="status">hover a field or a byte</div>
<main><section id="hex" aria-label="bytes"><div id="rows"><div id="win"></div></div></section>
<section id="tree" aria-label="fields"><ul>{tree}</ul></section></main>
<script type="application/json" id="meta">{payload}</script>
<script type="text/plain" id="bytes">{data}</script>
<script>{script}</script>
</body></html>
"""
