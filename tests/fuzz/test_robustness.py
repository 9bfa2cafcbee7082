"""The cost of a damaged length or count is bounded by what the file says around it.

Every length and count field (`len_*`, `num_*`, `*_minus_one`, the first byte of a btree var-len
one, a btree block's `entry_size_or_count`, as fuzz/structure.py finds them in the generated
parsers' debug positions) of every layout's writer seeds and Java-written fixtures, the
multi-megabyte containers included, is set in turn to 0, 1, 0x7fffffff and 0xffffffff (cut to
the field's width; a varint, as the bitmap global index's counts and lengths are, takes the value
whole; CRCs recomputed where a checksum would stop the damage at the door); each parse, through
every public entry point of the layout (a btree index: opened, then every block read by a scan
of all rows), must end (answer or FormatError) within 0.5 s and 64 MB of peak resident memory.
Measured in a subprocess (resource_probe.py: peak RSS over a warm-up baseline, under an
address-space limit), one per seed.
"""

from __future__ import annotations

import re

import pytest

import fuzzlib
import leb128
import structure
from fixture_catalog import CONTAINERS
from fuzzlib import Seed
from paimon_schema.layouts.btree_global_index import write_btree_global_index
from test_resources import run_probe

SECONDS = 0.5
MEGABYTES = 64
VALUES = (0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF)
#: At most this many fields of one name per seed (a roaring bitmap has a count per container).
PER_NAME = 2
COUNT = re.compile(r"(?:^|\.)(len_\w+|num_\w+|\w+_minus_one)$")
#: A btree file's counts and lengths also sit in var-len integers and in each block's table.
BTREE_COUNT = re.compile(r"(?:^|\.)(len_\w+|num_\w+|\w+_minus_one|entry_size_or_count)(\.b0)?$")


def seeds() -> list[Seed]:
    """The writer seeds, the fixture seeds, the catalogued containers above the fuzzers'
    size cap (the 3 MB Java sidecars, whose damaged head once cost seconds and 325 MB), and a
    btree index with full 64 KiB blocks (the fuzzers' are a few bytes each)."""
    found = [*fuzzlib.writer_seeds(), *fuzzlib.fixture_seeds()]
    found.append(Seed("writer/btree-64k-blocks", "btree",
                      write_btree_global_index("INT", [i % 20_000 for i in range(60_000)]).data, data_type="INT"))
    names = {s.name for s in found}
    for rel in CONTAINERS:
        if rel not in names and (fuzzlib.SHARED_FIXTURES / rel).is_file():
            found.append(Seed(rel, "container", (fuzzlib.SHARED_FIXTURES / rel).read_bytes(),
                              row_type=tuple(fuzzlib._container_row_type(rel).items())))
    return found


def damaged(seed: Seed) -> list[tuple[str, list]]:
    """(case name, [offset, hex]) for each length/count field and each value in VALUES."""
    cases, per_name = [], {}
    for field in structure.int_fields(seed):
        if not (BTREE_COUNT if seed.layout == "btree" else COUNT).search(re.sub(r"\[\d+\]", "", field.path)):
            continue
        name = re.sub(r"\[\d+\]", "[]", field.path)
        per_name[name] = per_name.get(name, 0) + 1
        if per_name[name] > PER_NAME:
            continue
        for value in dict.fromkeys(v % (1 << 8 * field.width) for v in VALUES):
            data = structure.set_field(seed.data, field, value)
            if seed.layout == "dv":         # the bins' CRCs must not stop the damage at the door
                patch = [0, structure.fix_dv_checksums(data).hex()]
            elif seed.layout == "btree":    # nor the blocks' trailers
                patch = [0, structure.fix_btree_checksums(data).hex()]
            else:
                patch = [field.start, data[field.start:field.start + field.width].hex()]
            cases.append((f"{field.path} = {value:#x}", patch))
    for var in structure.var_len_fields(seed):
        name = re.sub(r"\[\d+\]", "[]", var.path)
        if not COUNT.search(re.sub(r"\[\d+\]", "", var.path)):
            continue
        per_name[name] = per_name.get(name, 0) + 1
        if per_name[name] > PER_NAME:
            continue
        for value in VALUES:
            data = structure.fix_global_bitmap_checksums(leb128.set_var_len(seed.data, var.start, var.width, value))
            cases.append((f"{var.path} = {value:#x}", [0, data.hex()]))
    return cases


SEEDS = seeds()
LAYOUTS = sorted({s.layout for s in SEEDS})


@pytest.mark.parametrize("layout", LAYOUTS)
def test_damaged_lengths_and_counts_cost_little(layout: str) -> None:
    """One interpreter per layout: every seed warmed up, then every damaged copy parsed."""
    group = [s for s in SEEDS if s.layout == layout]
    inputs = [{"name": f"{seed.name}: {case}", "seed": i, "patch": patch}
              for i, seed in enumerate(group) for case, patch in damaged(seed)]
    if not inputs:
        assert layout == "hash", layout     # a hash index is a bare list: no length, no count
        return
    job = {"layout": layout, "exercise": False, "repeat": 2, "limit_mb": 256,
           "seeds": [{"hex": s.data.hex(), "data_type": s.data_type, "row_type": list(s.row_type),
                      "ranges": list(s.ranges)} for s in group],
           "inputs": inputs}
    results = run_probe(job, timeout=900)
    assert len(results) == len(inputs), results[-3:]
    problems = [f"{r['name']}: {r['seconds']:.2f} s, +{r['rss_mb']:.0f} MB"
                + (f"; {r['failures'][0]}" if r["failures"] else "")
                for r in results
                if r["seconds"] > SECONDS or r["rss_mb"] > MEGABYTES or r["failures"]]
    assert not problems, f"{len(problems)} of {len(results)} damaged {layout} files:\n" + "\n".join(problems)
