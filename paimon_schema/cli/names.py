"""One name per layout, for every command: `dump --layout`, `verify --layout`, `diagram`, `layouts`.

The names are Paimon's own where it has one (the index types `bitmap`, `bloom-filter`, `bsi`,
`range-bitmap`) and the spec's name in the same kebab case otherwise. The spellings used before
(`dv`, `hash`, the spec file stems such as `deletion_vectors` or `bitmap_index`) stay accepted.
"""

from __future__ import annotations

#: canonical name -> spec file stem (formats/<stem>.ksy, docs/<stem>.md and .svg)
SPECS: dict[str, str] = {
    "file-index": "file_index",
    "bitmap": "bitmap_index",
    "bloom-filter": "bloom_filter",
    "bsi": "bsi_index",
    "range-bitmap": "range_bitmap",
    "deletion-vectors": "deletion_vectors",
    "hash-index": "hash_index",
    "roaring-bitmap": "roaring_bitmap",
    "paimon-common": "paimon_common",
    "binary-row": "binary_row",
}

#: older or other spellings -> canonical name
ALIASES: dict[str, str] = {
    "dv": "deletion-vectors", "hash": "hash-index",
    "container": "file-index", "roaring": "roaring-bitmap", "bloom": "bloom-filter",
    **{stem.replace("_", "-"): name for name, stem in SPECS.items()},
}


def canonical(name: str) -> str | None:
    """The canonical name of `name` in any accepted spelling, or None."""
    key = name.strip().lower().replace("_", "-")
    if key in SPECS:
        return key
    return ALIASES.get(key)


def aliases_of(name: str) -> list[str]:
    """Other accepted spellings of a canonical name (underscore spellings left implicit)."""
    return [a for a, n in ALIASES.items() if n == name and a != name]
