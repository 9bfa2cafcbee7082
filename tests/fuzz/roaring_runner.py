"""Feed hostile roaring bytes to one decoder in THIS process; started as a subprocess by
test_roaring_hostile.py so that a crash inside CRoaring shows as a signal exit code instead of
killing pytest.

argv[1] is the decoder:
  ours         paimon_schema.layouts.roaring_bitmap.deserialize (header check, then pyroaring's safe path)
  pyroaring    pyroaring.BitMap.deserialize alone
  ours64       the bytes as the only bucket (key 0) of a 64-bit bin of a DV file, CRC valid,
               through ps.DeletionVectorFile.parse
  pyroaring64  the same 64-bit portable bytes through pyroaring.BitMap64.deserialize alone
stdin: one hex input per line. stdout: `#i` before input i (so the last one names the input
that crashed), then one JSON line: {"outcomes": [...], "problems": [...]} where an outcome is
"bitmap:<cardinality>", "FormatError", "ValueError" or "<OtherType>".
"""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from pyroaring import BitMap, BitMap64  # noqa: E402

import paimon_schema as ps  # noqa: E402
from paimon_schema.layouts import roaring_bitmap as roaring  # noqa: E402

MAGIC64 = bytes.fromhex("d1d33964")


def as_dv64(bitmap32: bytes) -> bytes:
    """A DV file whose one 64-bit bin holds `bitmap32` as bucket 0, with a valid CRC."""
    payload = MAGIC64 + (1).to_bytes(8, "little") + (0).to_bytes(4, "little") + bitmap32
    return (b"\x01" + len(payload).to_bytes(4, "big") + payload
            + zlib.crc32(payload).to_bytes(4, "big"))


def portable64(bitmap32: bytes) -> bytes:
    return (1).to_bytes(8, "little") + (0).to_bytes(4, "little") + bitmap32


def main() -> None:
    mode = sys.argv[1]
    outcomes, problems = [], []
    for i, line in enumerate(sys.stdin):
        data = bytes.fromhex(line.strip())
        print(f"#{i}", flush=True)
        try:
            if mode == "ours":
                bitmap, _ = roaring.deserialize(data)
            elif mode == "pyroaring":
                bitmap = BitMap.deserialize(data)
            elif mode == "ours64":
                f = ps.DeletionVectorFile.parse(as_dv64(data))
                bitmap = f.bins[0].bitmap
            elif mode == "pyroaring64":
                bitmap = BitMap64.deserialize(portable64(data))
            else:
                raise SystemExit(f"unknown mode {mode}")
            outcomes.append(f"bitmap:{len(bitmap)}")
        except ps.FormatError as exc:
            outcomes.append("FormatError")
            if exc.offset is None or not 0 <= exc.offset <= len(data) + 64:
                problems.append(f"input {i}: FormatError offset {exc.offset}: {exc}")
        except Exception as exc:       # noqa: BLE001 - classify everything
            outcomes.append(type(exc).__name__)
            if mode.startswith("ours"):
                problems.append(f"input {i}: {type(exc).__name__} escaped: {exc}; hex {data.hex()[:400]}")
    print(json.dumps({"outcomes": outcomes, "problems": problems}), flush=True)


if __name__ == "__main__":
    main()
