"""pyroaring glue: check roaring bytes before CRoaring sees them, then let it decode them.

The portable format is in formats/roaring_bitmap.ksy. Decoding goes through pyroaring, whose
`deserialize` uses CRoaring's bounds-checked reader and its internal validation; but it
ignores trailing bytes, raises IndexError on an empty buffer and reports no position. So the
header is read here first (a few numpy operations per bitmap, not per value: this runs on
every deletion vector), which yields the serialized size that delimits the bitmap, and the
located `FormatError`s. `test_roaring.py` proves it equal to the generated parser.

`containers` is that one walk of the header; the row masks of query/masks.py read the container
data it locates directly.
"""

from __future__ import annotations

import struct
from typing import NamedTuple, cast

import numpy as np
from pyroaring import BitMap, BitMap64

from paimon_schema.values.errors import FormatError

NO_RUNS_COOKIE = 12346
RUNS_COOKIE = 12347
MAX_CONTAINERS = 1 << 16
ARRAY_MAX = 4096
BITMAP_BYTES = 8192


class Containers(NamedTuple):
    """The containers of one portable RoaringBitmap, as its header describes them."""

    keys: np.ndarray            # high 16 bits of each container's values (int64, ascending)
    cardinalities: np.ndarray   # values per container (int64)
    runs: np.ndarray            # run container? (bool)
    offsets: np.ndarray         # absolute start of each container's data in the buffer (int64)
    end: int                    # absolute end of the bitmap


def serialized_size(buf: bytes | memoryview, pos: int = 0) -> int:
    """Byte length of the portable RoaringBitmap starting at `buf[pos]`, after checking that
    its header is well formed and that every container lies inside `buf`."""
    small = _small_size(buf, pos)
    return containers(buf, pos).end - pos if small is None else small


#: Bitmaps of at most this many containers are sized by `_small_size`.
SMALL_CONTAINERS = 16


def _small_size(buf: bytes | memoryview, pos: int) -> int | None:
    """`containers(buf, pos).end - pos` for a well-formed bitmap of a few containers, read
    with `struct` (the numpy walk costs ~100 us of fixed overhead: the bitmaps of a small
    file's bitmap index, which planning a table reads per file, are one container); None for
    more containers or anything `containers` would refuse, which it then locates."""
    end = len(buf)
    if pos + 4 > end:
        return None
    (cookie,) = struct.unpack_from("<I", buf, pos)
    at = pos + 4
    if cookie & 0xFFFF == RUNS_COOKIE:
        count = (cookie >> 16) + 1
        flag_bytes = (count + 7) // 8
        if count > SMALL_CONTAINERS or at + flag_bytes > end:
            return None
        flags = int.from_bytes(buf[at:at + flag_bytes], "little")
        at += flag_bytes
        has_offsets = count >= 4
    elif cookie == NO_RUNS_COOKIE:
        if at + 4 > end:
            return None
        (count,) = struct.unpack_from("<I", buf, at)
        at += 4
        if count > SMALL_CONTAINERS:
            return None
        flags, has_offsets = 0, True
    else:
        return None
    if at + 4 * count > end:
        return None
    descriptors = struct.unpack_from(f"<{2 * count}H", buf, at)
    keys = descriptors[0::2]
    if any(a >= b for a, b in zip(keys, keys[1:])):
        return None
    at += 4 * count
    if has_offsets:
        at += 4 * count
        if at > end:
            return None
    for i in range(count):
        if flags >> i & 1:
            if at + 2 > end:
                return None
            at += 2 + 4 * struct.unpack_from("<H", buf, at)[0]
        else:
            cardinality = descriptors[2 * i + 1] + 1
            at += BITMAP_BYTES if cardinality > ARRAY_MAX else 2 * cardinality
    return None if at > end else at - pos


def containers(buf: bytes | memoryview, pos: int = 0) -> Containers:
    """The header of the portable RoaringBitmap at `buf[pos]`, checked: well formed, keys
    ascending, every container inside `buf`; FormatError (located) otherwise."""
    end = len(buf)

    def need(n: int, at: int, field: str) -> None:
        if at + n > end:
            raise FormatError(f"roaring bitmap truncated: {field} needs {n} bytes, "
                              f"{max(end - at, 0)} left", offset=min(at, end), path=field)

    need(4, pos, "cookie")
    (cookie,) = struct.unpack_from("<I", buf, pos)
    at = pos + 4
    if cookie & 0xFFFF == RUNS_COOKIE:
        count = (cookie >> 16) + 1
        need((count + 7) // 8, at, "run_flags")
        run_flags = np.unpackbits(np.frombuffer(buf, np.uint8, (count + 7) // 8, at),
                                  bitorder="little")[:count].astype(bool)
        at += (count + 7) // 8
        has_offsets = count >= 4
    elif cookie == NO_RUNS_COOKIE:
        need(4, at, "num_containers_field")
        (count,) = struct.unpack_from("<I", buf, at)
        if count > MAX_CONTAINERS:
            raise FormatError(f"roaring bitmap claims {count} containers (at most 65536)",
                              offset=at, path="num_containers_field")
        at += 4
        run_flags = np.zeros(count, dtype=bool)
        has_offsets = True
    else:
        raise FormatError(f"not a roaring bitmap: cookie {cookie & 0xFFFF} (expected 12346 or 12347)",
                          offset=pos, path="cookie")
    need(4 * count, at, "descriptors")
    descriptors = np.frombuffer(buf, "<u2", 2 * count, at).reshape(count, 2)
    keys = descriptors[:, 0].astype(np.int64)
    cardinalities = descriptors[:, 1].astype(np.int64) + 1
    if count > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        bad = int(np.argmin(keys[1:] > keys[:-1])) + 1
        raise FormatError("roaring container keys are not strictly ascending",
                          offset=at + 4 * bad, path=f"descriptors[{bad}].key")
    at += 4 * count
    ofs_at = at
    if has_offsets:
        need(4 * count, at, "ofs_containers")
        at += 4 * count
    sizes = np.where(cardinalities > ARRAY_MAX, BITMAP_BYTES, 2 * cardinalities)
    runs = np.flatnonzero(run_flags)
    if runs.size and has_offsets and _run_sizes_at_offsets(buf, pos, ofs_at, at, sizes, runs):
        runs = runs[:0]
    start: int = at
    counted = 0
    for i in runs:
        # Run containers carry their size; the ones before them are already known (summed
        # incrementally: a bitmap may have 65536 run containers).
        start += int(sizes[counted:i].sum())
        counted = int(i)
        need(2, start, f"containers[{i}].num_runs")
        (num_runs,) = struct.unpack_from("<H", buf, start)
        sizes[i] = 2 + 4 * num_runs
    ends = at + np.cumsum(sizes)
    total = int(ends[-1]) if count else at
    if total > end:
        bad = int(np.argmax(ends > end))
        raise FormatError(f"roaring bitmap truncated: container {bad} ends at byte "
                          f"{int(ends[bad]) - pos} of the bitmap, only {end - pos} available",
                          offset=int(ends[bad] - sizes[bad]), path=f"containers[{bad}]")
    return Containers(keys, cardinalities, run_flags, ends - sizes, total)


def _run_sizes_at_offsets(buf: bytes | memoryview, pos: int, ofs_at: int, at: int,
                          sizes: np.ndarray, runs: np.ndarray) -> bool:
    """Size the run containers in one numpy pass, reading their run counts where the stored
    offsets put them, and keep those sizes only if every stored offset is where the sizes say
    the container starts: by induction, exactly what the walk in order would read. Every
    bitmap CRoaring and Java write passes; anything else is left to the walk (False)."""
    stored = np.frombuffer(buf, "<u4", len(sizes), ofs_at).astype(np.int64) + pos
    starts = stored[runs]
    if int(starts.min()) < at or int(starts.max()) + 2 > len(buf):
        return False
    raw = np.frombuffer(buf, np.uint8)
    trial = sizes.copy()
    trial[runs] = 2 + 4 * (raw[starts].astype(np.int64) | raw[starts + 1].astype(np.int64) << 8)
    if not np.array_equal(at + np.cumsum(trial) - trial, stored):
        return False
    sizes[runs] = trial[runs]
    return True


def deserialize(buf: bytes | memoryview, pos: int = 0, *, exact: bool = False) -> tuple[BitMap, int]:
    """Decode the bitmap at `buf[pos]`; return it and its serialized size.

    With `exact`, the bitmap must end exactly at the end of `buf`.
    """
    size = serialized_size(buf, pos)
    if exact and pos + size != len(buf):
        raise FormatError(f"{len(buf) - pos - size} bytes follow the roaring bitmap",
                          offset=pos + size, path="trailing")
    try:
        bitmap = BitMap.deserialize(cast(bytes, memoryview(buf)[pos:pos + size]))   # any buffer
    except ValueError as exc:
        raise FormatError(f"invalid roaring bitmap: {exc}", offset=pos, path="containers") from exc
    return bitmap, size


def deserialize64(buf: bytes | memoryview) -> BitMap64:
    """Decode a 64-bit portable Roaring bitmap whose layout was already checked."""
    try:
        return BitMap64.deserialize(cast(bytes, buf))                 # any buffer
    except ValueError as exc:
        raise FormatError(f"invalid 64-bit roaring bitmap: {exc}", offset=0, path="buckets") from exc

