"""How much faster is the V1 bitmap dictionary fast path than the generated parser?

A V1 bitmap index lists every key unsorted, so opening one reads the whole dictionary. This
builds 100k-key V1 blobs (INT and STRING keys; every key in two rows, so every entry points at a
stored bitmap, as in spec §2.4) and reads the dictionary through the generated Kaitai parser and
through `scan_v1_dictionary`, checking that both agree.

    python benchmarks/bitmap_v1_dictionary.py [--keys 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import struct

from pyroaring import BitMap
from timing import best

from paimon_schema.layouts.bitmap_index import BitmapIndexReader
from paimon_schema.layouts.bitmap_index.scan import parse_v1_dictionary, scan_v1_dictionary
from paimon_schema.layouts.paimon_common import KeyKind


def v1_blob(keys: list[bytes]) -> bytes:
    """V1 with encoded `keys`; key i is in rows i and i + len(keys) (a stored bitmap each)."""
    count = len(keys)
    entries, body = [], []
    offset = 0
    for i, key in enumerate(keys):
        bitmap = BitMap([i, i + count])
        bitmap.run_optimize()
        raw = bitmap.serialize()
        entries.append(key + struct.pack(">i", offset))
        body.append(raw)
        offset += len(raw)
    head = struct.pack(">biib", 1, 2 * count, count, 0)
    return head + b"".join(entries) + b"".join(body)


def int_keys(count: int) -> list[bytes]:
    return [struct.pack(">i", (i * 2654435761) % 2**32 - 2**31) for i in range(count)]


def string_keys(count: int) -> list[bytes]:
    texts = [f"user-{i:08d}-{'派蒙' if i % 3 == 0 else 'paimon'}".encode() for i in range(count)]
    return [struct.pack(">i", len(t)) + t for t in texts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    for name, kind, data_type, make in [("INT", KeyKind.int32, "INT", int_keys),
                                        ("STRING", KeyKind.string, "STRING", string_keys)]:
        blob = v1_blob(make(args.keys))
        assert scan_v1_dictionary(blob, kind) == parse_v1_dictionary(blob, kind)
        generated = best(lambda: parse_v1_dictionary(blob, kind), max(1, args.repeat // 2))
        fast = best(lambda: scan_v1_dictionary(blob, kind), args.repeat)
        opened = best(lambda: BitmapIndexReader.open(blob, data_type), args.repeat)
        print(f"{name:6} {args.keys} keys, {len(blob) / 1e6:.1f} MB: generated parser {generated * 1e3:8.1f} ms, "
              f"fast path {fast * 1e3:6.1f} ms ({generated / fast:5.0f}x); "
              f"BitmapIndexReader.open {opened * 1e3:6.1f} ms")


if __name__ == "__main__":
    main()
