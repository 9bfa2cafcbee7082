"""O'Neil's bit-sliced index (BSI) algorithms over pyroaring bitmaps.

Both Paimon indexes that answer range predicates keep a BSI: a set of rows that have a value
(the existence bitmap, `ebm`) and one bitmap per bit of the value, slice `i` holding the rows
whose value has bit `i` set. The range-bitmap index stores each row's dictionary *code*, the
`bsi` index each row's value (or its magnitude, for negatives). Java's two readers spell the
comparisons differently (`BitSliceIndexBitmap` walks the slices bottom-up, the older
`BitSliceIndexRoaringBitmap` top-down) but both compute the exact answer over the rows of
`ebm`, ignoring predicate bits above the top slice; so one exact implementation serves both.

`slices` is any sequence of bitmaps: a lazy one lets a reader deserialize only the slices an
operation touches (`greater_than` needs none for the trailing one bits of its predicate, and
`equal` stops once no row is left).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyroaring import BitMap

Slices = Sequence[BitMap]


def equal(ebm: BitMap, slices: Slices, value: int) -> BitMap:
    """Rows of `ebm` whose value is `value` (`BitSliceIndexBitmap.eq`)."""
    state = BitMap(ebm)
    for i in range(len(slices)):
        if not state:
            break
        if (value >> i) & 1:
            state &= slices[i]
        else:
            state -= slices[i]
    return state


def greater_than(ebm: BitMap, slices: Slices, value: int) -> BitMap:
    """Rows of `ebm` whose value is > `value` (`BitSliceIndexBitmap.gt`).

    Bottom-up O'Neil: the state starts empty, and a 1 bit of `value` keeps only the rows that
    also have it (AND) while a 0 bit adds the rows that have it (OR); so the run of 1 bits at
    the bottom of `value` leaves the state empty and its slices are never read.
    """
    if value < 0:
        return BitMap(ebm)
    start = (value ^ (value + 1)).bit_length() - 1          # trailing one bits of value
    if start >= len(slices):
        return BitMap()
    state = BitMap(slices[start])
    for i in range(start + 1, len(slices)):
        if (value >> i) & 1:
            state &= slices[i]
        else:
            state |= slices[i]
    return state & ebm


def greater_or_equal(ebm: BitMap, slices: Slices, value: int) -> BitMap:
    return greater_than(ebm, slices, value - 1)


def less_than(ebm: BitMap, slices: Slices, value: int) -> BitMap:
    return ebm - greater_or_equal(ebm, slices, value)


def less_or_equal(ebm: BitMap, slices: Slices, value: int) -> BitMap:
    return ebm - greater_than(ebm, slices, value)


def top_k(ebm: BitMap, slices: Slices, k: int) -> BitMap:
    """The `k` rows of `ebm` with the largest values (`BitSliceIndexBitmap.topK`, strict).

    See `_select_k` for the rows kept on a tie.
    """
    return _select_k(ebm, slices, k, lambda e, s: e & s, lambda e, s: e - s)


def bottom_k(ebm: BitMap, slices: Slices, k: int) -> BitMap:
    """The `k` rows of `ebm` with the smallest values (`BitSliceIndexBitmap.bottomK`, strict).

    See `_select_k` for the rows kept on a tie.
    """
    return _select_k(ebm, slices, k, lambda e, s: e - s, lambda e, s: e & s)


def _select_k(ebm: BitMap, slices: Slices, k: int,
              better: Callable[[BitMap, BitMap], BitMap],
              worse: Callable[[BitMap, BitMap], BitMap]) -> BitMap:
    """O'Neil's top-k (algorithm 4.1 of "Bit-Sliced Index Arithmetic"), trimmed to `k` rows.

    From the top slice down, `g` collects rows certainly among the best `k` and `e` the rows
    still tied with the k-th best on the bits seen so far. When the walk ends with more than
    `k` rows, the surplus is taken from `e` (rows tied on the k-th value) by dropping its
    LOWEST row positions first, as Java does (it removes `e`'s first rows from the result).
    So on a tie the rows kept are the tied rows with the HIGHEST row numbers.
    """
    if k == 0:
        return BitMap()
    g, e = BitMap(), BitMap(ebm)
    if len(e) <= k:
        return e
    for i in reversed(range(len(slices))):
        candidates = g | better(e, slices[i])
        if len(candidates) > k:
            e = better(e, slices[i])
        elif len(candidates) < k:
            g, e = candidates, worse(e, slices[i])
        else:
            e = better(e, slices[i])
            break
    result = g | e
    surplus = len(result) - k
    if surplus > 0:
        result -= e[:surplus]
    return result
