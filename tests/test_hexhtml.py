"""`dump --html`: the page is self-contained and, run in headless Chromium, links the two
sides right: hovering each field lights exactly its bytes, hovering each byte lights the
narrowest field holding it (real mouse events through the page's own script)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import paimon_schema as ps
from paimon_schema.cli import hexdump
from paimon_schema.layouts import registry
from paimon_schema.cli.html import render_html

from oracles import oracle_unavailable

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]

#: Appended to a copy of the page: hover every field, then every byte, and record what lit up.
CHECK = """<script>
(function () {
  const over = e => e.dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
  const click = e => e.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  const cells = cls => [...document.querySelectorAll("#hex .b" + cls)].map(e => +e.dataset.i);
  const fields = [...document.querySelectorAll("#tree li")].map(li => {
    click(li.querySelector(".name"));             // selects it and scrolls the bytes into view
    const selected = cells(".sel");
    over(li.querySelector(".name"));
    return {f: li.dataset.f === undefined ? null : +li.dataset.f,
            o: li.dataset.o === undefined ? null : +li.dataset.o,
            n: li.dataset.n === undefined ? null : +li.dataset.n,
            leaf: li.classList.contains("leaf"), rendered: cells(""), sel: selected,
            lit: cells(".hl"), status: document.getElementById("status").textContent};
  });
  const bytes = [];
  const total = JSON.parse(document.getElementById("meta").textContent).shown;
  const step = Math.max(1, Math.floor(total / 600));      // big pages: a sample of the bytes
  for (let k = 0; k < total; k += step) {
    let cell = document.querySelector('#hex .b[data-i="' + k + '"]');
    if (!cell) { window.paimonHex.reveal(k); cell = document.querySelector('#hex .b[data-i="' + k + '"]'); }
    over(cell);
    const li = document.querySelector("#tree li.leaf.hl");
    bytes.push(li ? +li.dataset.f : null);
  }
  const rows = [...document.querySelectorAll("#hex .row")].map(r => r.querySelectorAll(".b, .pad").length);
  document.body.setAttribute("data-check", JSON.stringify({fields, bytes, rows, step}));
})();
</script>"""


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        oracle_unavailable("chromium is not installed (apt-get install chromium)")
    return path


def run_page(page: str) -> dict:
    """The page with CHECK appended, loaded in headless Chromium; CHECK's findings."""
    with tempfile.TemporaryDirectory() as tmp:
        html_file = Path(tmp) / "page.html"
        html_file.write_text(page.replace("</body>", CHECK + "</body>"), encoding="utf-8")
        done = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp}/profile",
                               "--dump-dom", html_file.as_uri()],
                              capture_output=True, text=True, timeout=120)
    found = re.search(r'data-check="([^"]*)"', done.stdout)
    assert found, f"no check result; chromium said: {done.stderr[-2000:]}"
    import html

    return json.loads(html.unescape(found[1]))


def _samples() -> dict[str, tuple[str, bytes, str | None]]:
    container = ps.write_file_index({
        "city": {"bitmap": ps.build_index("bitmap", "STRING", ["Lima", "Oslo", None, "Lima"])},
        "m[k]": {"bloom-filter": None}})
    dv32, _ = ps.write_deletion_vectors({"a.parquet": [1, 5, 9], "b.parquet": [7]})
    dv64, _ = ps.write_deletion_vectors({"a.parquet": [1, 2**33]}, bitmap64=True)
    return {"container": ("file-index", container, None),
            "32-bit deletion vectors": ("dv", dv32, None),
            "64-bit deletion vectors": ("dv", dv64, None),
            "bitmap": ("bitmap", ps.build_index("bitmap", "INT", [3, 1, 3, None], version=1), "INT"),
            "range-bitmap": ("range-bitmap", ps.build_index("range-bitmap", "INT", [5, 3, None, 9]), "INT")}


@pytest.mark.parametrize("name", list(_samples()))
def test_fields_light_their_bytes_in_chromium(name: str) -> None:
    layout, data, data_type = _samples()[name]
    root = registry.parse_generated(layout, data, data_type)
    fields = hexdump.fields(root, data, {"city": "STRING"}.get)      # container blobs opened
    assert name != "container" or any(f.opened for f in fields)
    got = run_page(render_html(f"sample ({layout})", data, fields))
    leaves = [f for f in got["fields"] if f["leaf"]]
    assert len(leaves) == len(fields)
    for item in got["fields"]:
        if item["o"] is None:
            assert item["sel"] == item["lit"] == [], item
            continue
        rendered = set(item["rendered"])
        expected = [k for k in range(item["o"], min(item["o"] + item["n"], len(data))) if k in rendered]
        assert item["o"] >= len(data) or item["o"] in rendered, item      # scrolled into view
        assert item["sel"] == expected and item["lit"] == expected, item
        if item["leaf"]:
            f = fields[item["f"]]
            assert (item["o"], item["n"]) == (f.offset, f.size)
            assert item["status"].startswith(f.path + "  "), (item, f.path)
    check_bytes(got, fields, len(data))


def check_bytes(got: dict, fields: list, size: int) -> None:
    """Each byte (or each `step`-th of a big page) lights the narrowest field holding it
    (none: a byte no field reads); rows are 16 bytes wide."""
    for j, index in enumerate(got["bytes"]):
        k = j * got["step"]
        holding = [i for i, f in enumerate(fields) if f.offset is not None and f.offset <= k < f.offset + f.size]
        if not holding:
            assert index is None
            continue
        assert index is not None and fields[index].size == min(fields[i].size for i in holding), (k, index)
    assert len(got["bytes"]) == -(-size // got["step"]) and set(got["rows"]) == {16}


def test_page_is_self_contained_and_capped() -> None:
    data, _ = ps.write_deletion_vectors({"a.parquet": range(0, 200_000, 2), "b.parquet": [7]})
    fields = hexdump.fields(registry.parse_generated("dv", data), data)
    page = render_html("dv", data, fields, limit=64)
    assert not re.search(r"\b(src|href)\s*=|https?://|@import|url\(", page)
    assert "the first 64 of" in page and page.count('<li class="leaf"') == len(fields)
    got = run_page(page)
    assert len(got["bytes"]) == 64
    assert got["fields"][-1]["lit"] == []                 # the checksum lies past the shown bytes
    assert "<title>x&lt;/script&gt;</title>" in render_html("x</script>", b"", [])


def test_a_big_page_lays_out_only_what_is_near_the_view() -> None:
    """Thousands of rows: the page keeps a window of them, and scrolling to a field (a click in
    the tree) or to a byte brings its rows in, still lit right."""
    data, _ = ps.write_deletion_vectors({"a.parquet": range(0, 400_000, 3), "b.parquet": [7, 9]})
    fields = hexdump.fields(registry.parse_generated("dv", data), data)
    got = run_page(render_html("dv", data, fields))
    assert len(data) > 40_000 and len(got["rows"]) < 200         # 2,500+ rows in the file
    last = got["fields"][-1]                                      # bins[1].checksum, at the end
    assert last["o"] == len(data) - 4 and last["sel"] == list(range(len(data) - 4, len(data)))
    check_bytes(got, fields, len(data))
