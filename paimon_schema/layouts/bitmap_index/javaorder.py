"""Java iteration orders that leak into Paimon's bytes (spec Appendices A and B).

Paimon's writers iterate a ``java.util.HashMap`` (bitmap index entries and body, file-index
container columns, deletion-vector bins) and a fastutil ``IntOpenHashSet`` (hash index), so a
byte-exact Python writer must reproduce those iteration orders. This module emulates both
faithfully, including the lazy resize of ``computeIfAbsent`` and ``HashMap``'s red-black tree
bins; ``tests/test_javaorder.py`` checks it against the JVM.

Key representation (what callers pass as keys, per ``kind``):

=================  ==========================  =============================================
kind               Java key class              Python key
=================  ==========================  =============================================
``int``            Integer, Short, Byte        int (signed value)
``long``           Long (timestamps as long)   int (signed value)
``boolean``        Boolean                     bool or 0/1
``float``          Float                       int: ``floatToIntBits`` (canonical NaN,
                                               unsigned), see :func:`float_key`
``double``         Double                      int: ``doubleToLongBits`` (canonical NaN,
                                               unsigned), see :func:`double_key`
``string``         java.lang.String            str
``binary_string``  Paimon BinaryString         bytes (UTF-8)
=================  ==========================  =============================================

With these, Python equality is Java ``equals`` (``-0.0 != 0.0``, all NaNs one key) and
:func:`key_compare` is Java ``compareTo``.
"""

from __future__ import annotations

import math
import struct
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from paimon_schema.runtime import collector

try:
    from paimon_schema.runtime import _kernels
except ImportError:             # built without a C compiler: tree bins replayed in Python
    _kernels = None  # type: ignore[assignment]

__all__ = [
    "binary_string_hash",
    "binary_string_hashes",
    "KINDS",
    "JavaHashMap",
    "bitmap_distinct_order",
    "bitmap_key_order",
    "double_key",
    "float_key",
    "hash_function",
    "int_open_hash_set_order",
    "java_hash_code",
    "java_hash_codes",
    "java_map_order",
    "key_compare",
    "string_key_order",
]

K = TypeVar("K")
V = TypeVar("V")

KINDS = ("int", "long", "boolean", "float", "double", "string", "binary_string")
"""The key kinds of :func:`java_hash_code` (see the module docstring for their representation)."""

_M32 = 0xFFFFFFFF
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


def _int32(value: int) -> int:
    value &= _M32
    return value - (1 << 32) if value >> 31 else value


# ----------------------------------------------------------------------------------------------
# hashCode() (spec A.3)
# ----------------------------------------------------------------------------------------------


def float_key(value: float) -> int:
    """``Float.floatToIntBits((float) value)`` as an unsigned int: NaN becomes 0x7fc00000."""
    if value != value:
        return 0x7FC00000
    return struct.unpack("<I", struct.pack("<f", value))[0]


def double_key(value: float) -> int:
    """``Double.doubleToLongBits(value)`` as an unsigned int: NaN becomes 0x7ff8000000000000."""
    if value != value:
        return 0x7FF8000000000000
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def _long_hash(value: int) -> int:
    return _int32(value ^ ((value & 0xFFFFFFFFFFFFFFFF) >> 32))


def _boolean_hash(value: int) -> int:
    return 1231 if value else 1237


def _string_hash(value: str) -> int:
    """``String.hashCode``: over UTF-16 code units, so a supplementary character counts twice."""
    h = 0
    for unit in memoryview(value.encode(_UTF16_NATIVE, "surrogatepass")).cast("H"):
        h = (31 * h + unit) & _M32
    return h - (1 << 32) if h >> 31 else h


def binary_string_hash(data: bytes) -> int:
    """``BinaryString.hashCode`` = ``MurmurHashUtils.hashBytes(seed 42)``: murmur3 x86_32 over
    little-endian words, but every tail byte is mixed on its own (sign-extended)."""
    h = 42
    aligned = len(data) & ~3
    for (k,) in struct.iter_unpack("<I", data[:aligned]):
        k = (k * 0xCC9E2D51) & _M32
        k = (((k << 15) | (k >> 17)) * 0x1B873593) & _M32
        h ^= k
        h = ((((h << 13) | (h >> 19)) & _M32) * 5 + 0xE6546B64) & _M32
    for byte in data[aligned:]:
        k = ((byte | 0xFFFFFF00 if byte & 0x80 else byte) * 0xCC9E2D51) & _M32
        k = (((k << 15) | (k >> 17)) * 0x1B873593) & _M32
        h ^= k
        h = ((((h << 13) | (h >> 19)) & _M32) * 5 + 0xE6546B64) & _M32
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h - (1 << 32) if h >> 31 else h


_HASHES: dict[str, Callable[[Any], int]] = {
    "int": _int32,
    "long": _long_hash,
    "boolean": _boolean_hash,
    "float": _int32,
    "double": _long_hash,
    "string": _string_hash,
    "binary_string": binary_string_hash,
}


def hash_function(kind: str) -> Callable[[Any], int]:
    """The ``hashCode()`` function of a key kind (a signed int32 result)."""
    try:
        return _HASHES[kind]
    except KeyError:
        raise ValueError(f"unknown key kind {kind!r}; expected one of {KINDS}") from None


def java_hash_code(value: Any, kind: str) -> int:
    """Java's ``hashCode()`` of a key given in this module's representation for ``kind``."""
    return hash_function(kind)(value)


_U32 = np.uint32
_INV31 = pow(31, -1, 1 << 32)
_STRING_CHUNK = 1 << 16


def _string_hashes(strings: Sequence[str] | np.ndarray) -> np.ndarray:
    """``String.hashCode`` of many strings at once, in chunks (to bound memory).

    31 is odd, hence invertible mod 2**32: with unit ``u_i`` at position ``i`` of the chunk,
    ``hash = 31**end * sum(u_i * 31**-(i+1))`` over the string's units, a segment sum.
    """
    out = np.zeros(len(strings), _U32)
    for first in range(0, len(strings), _STRING_CHUNK):
        chunk = strings[first:first + _STRING_CHUNK]
        units = np.frombuffer("".join(chunk).encode("utf-16-le", "surrogatepass"), "<u2")
        lengths = np.fromiter(map(len, chunk), np.int64, len(chunk))
        if len(units) != lengths.sum():  # supplementary characters take two units
            lengths = np.fromiter((len(x.encode("utf-16-le", "surrogatepass")) // 2
                                   for x in chunk), np.int64, len(chunk))
        if not len(units):
            continue
        inverse_powers = np.multiply.accumulate(np.full(len(units), _INV31, _U32))
        powers = np.multiply.accumulate(np.full(len(units), 31, _U32))
        ends = np.cumsum(lengths)
        present = lengths > 0
        sums = np.add.reduceat(units.astype(_U32) * inverse_powers, (ends - lengths)[present],
                               dtype=np.uint64).astype(_U32)
        out[first:first + len(chunk)][present] = sums * powers[ends[present] - 1]
    return out.view(np.int32)


def _mix_h1(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    """MurmurHashUtils ``mixH1(h, mixK1(k))`` on uint32 arrays."""
    k = k * _U32(0xCC9E2D51)
    k = ((k << _U32(15)) | (k >> _U32(17))) * _U32(0x1B873593)
    h = h ^ k
    return ((h << _U32(13)) | (h >> _U32(19))) * _U32(5) + _U32(0xE6546B64)


def binary_string_hashes(values: Sequence[bytes] | np.ndarray) -> np.ndarray:
    """``BinaryString.hashCode`` of many byte strings at once: word ``j`` of every string long
    enough is mixed in one step (strings sorted by word count, so they form a prefix)."""
    lengths = np.fromiter(map(len, values), np.int64, len(values))
    buf = np.frombuffer(b"".join(values), np.uint8)
    words = lengths >> 2
    perm = np.argsort(-words, kind="stable")
    starts = (np.cumsum(lengths) - lengths)[perm]
    words = words[perm]
    lengths = lengths[perm]
    h = np.full(len(values), 42, _U32)
    active = len(values) - np.cumsum(np.bincount(words))  # strings with more than j words
    for j in range(int(words[0]) if len(values) else 0):
        n = active[j]
        at = starts[:n] + 4 * j
        word = (buf[at].astype(_U32) | (buf[at + 1].astype(_U32) << _U32(8))
                | (buf[at + 2].astype(_U32) << _U32(16)) | (buf[at + 3].astype(_U32) << _U32(24)))
        h[:n] = _mix_h1(h[:n], word)
    tails = starts + 4 * words
    for t in range(3):
        sel = np.nonzero((lengths & 3) > t)[0]
        h[sel] = _mix_h1(h[sel], buf[tails[sel] + t].view(np.int8).astype(np.int32).view(_U32))
    h ^= lengths.astype(_U32)
    h ^= h >> _U32(16)
    h *= _U32(0x85EBCA6B)
    h ^= h >> _U32(13)
    h *= _U32(0xC2B2AE35)
    h ^= h >> _U32(16)
    out = np.empty_like(h)
    out[perm] = h
    return out.view(np.int32)


def java_hash_codes(keys: Sequence[Any] | np.ndarray, kind: str) -> np.ndarray:
    """``hashCode()`` of many keys (this module's representation) as an int32 array."""
    if kind in ("int", "float"):
        return np.array(keys, np.int64).astype(np.int32)
    if kind in ("long", "double"):
        bits = np.array(keys, np.int64 if kind == "long" else np.uint64).view(np.uint64)
        return (bits ^ (bits >> np.uint64(32))).astype(_U32).view(np.int32)
    if kind == "boolean":
        return np.where(np.array(keys, bool), 1231, 1237).astype(np.int32)
    if kind == "string":
        return _string_hashes(keys)
    if kind == "binary_string":
        return binary_string_hashes(keys)
    raise ValueError(f"unknown key kind {kind!r}; expected one of {KINDS}")


# ----------------------------------------------------------------------------------------------
# compareTo() (only consulted inside HashMap tree bins, for keys with equal spread hashes)
# ----------------------------------------------------------------------------------------------


def _sign(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _float_order(bits: int, width: int) -> int:
    """Map float bits to an int whose order is ``Float.compare``'s (-0.0 < 0.0, NaN last)."""
    if bits >> (width - 1):
        return -(bits & ((1 << (width - 1)) - 1)) - 1
    return bits


def _compare_float(a: int, b: int) -> int:
    return _sign(_float_order(a, 32), _float_order(b, 32))


def _compare_double(a: int, b: int) -> int:
    return _sign(_float_order(a, 64), _float_order(b, 64))


def _compare_string(a: str, b: str) -> int:
    """``String.compareTo`` orders UTF-16 code units; UTF-16BE bytes sort the same way."""
    return _sign(a.encode("utf-16-be", "surrogatepass"), b.encode("utf-16-be", "surrogatepass"))


_COMPARES: dict[str, Callable[[Any, Any], int]] = {
    "int": _sign,
    "long": _sign,
    "boolean": _sign,
    "float": _compare_float,
    "double": _compare_double,
    "string": _compare_string,
    "binary_string": _sign,  # unsigned byte-wise, then shorter first: Python's bytes order
}


def key_compare(kind: str) -> Callable[[Any, Any], int]:
    """Java's ``compareTo`` for a key kind (sign only)."""
    try:
        return _COMPARES[kind]
    except KeyError:
        raise ValueError(f"unknown key kind {kind!r}; expected one of {KINDS}") from None


# ----------------------------------------------------------------------------------------------
# java.util.HashMap (spec Appendix A)
# ----------------------------------------------------------------------------------------------

_INITIAL_CAPACITY = 16
_TREEIFY_THRESHOLD = 8
_UNTREEIFY_THRESHOLD = 6
_MIN_TREEIFY_CAPACITY = 64


class _TreeNode:
    """``HashMap.TreeNode``: a red-black tree node that also keeps the bin's ``next`` chain."""

    __slots__ = ("hash", "key", "next", "prev", "parent", "left", "right", "red")

    def __init__(self, spread: int, key: Any, nxt: _TreeNode | None) -> None:
        self.hash = spread
        self.key = key
        self.next = nxt
        self.prev: _TreeNode | None = None
        self.parent: _TreeNode | None = None
        self.left: _TreeNode | None = None
        self.right: _TreeNode | None = None
        self.red = False


def _rotate_left(root: _TreeNode, p: _TreeNode) -> _TreeNode:
    r = p.right
    if r is not None:
        rl = p.right = r.left
        if rl is not None:
            rl.parent = p
        pp = r.parent = p.parent
        if pp is None:
            root = r
            r.red = False
        elif pp.left is p:
            pp.left = r
        else:
            pp.right = r
        r.left = p
        p.parent = r
    return root


def _rotate_right(root: _TreeNode, p: _TreeNode) -> _TreeNode:
    left = p.left
    if left is not None:
        lr = p.left = left.right
        if lr is not None:
            lr.parent = p
        pp = left.parent = p.parent
        if pp is None:
            root = left
            left.red = False
        elif pp.right is p:
            pp.right = left
        else:
            pp.left = left
        left.right = p
        p.parent = left
    return root


def _balance_insertion(root: _TreeNode, x: _TreeNode) -> _TreeNode:
    """CLR insertion fix-up, step for step as ``TreeNode.balanceInsertion``."""
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        xppl = xpp.left
        if xp is xppl:
            xppr = xpp.right
            if xppr is not None and xppr.red:
                xppr.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.right:
                    x = xp
                    root = _rotate_left(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_right(root, xpp)
        else:
            if xppl is not None and xppl.red:
                xppl.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.left:
                    x = xp
                    root = _rotate_right(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_left(root, xpp)


def _move_root_to_front(tab: dict[int, Any], capacity: int, root: _TreeNode) -> None:
    """The bin's first node must be the tree root: unlink it and put it at the chain's head."""
    index = root.hash & (capacity - 1)
    first = tab[index]
    if root is not first:
        tab[index] = root
        rp = root.prev
        rn = root.next
        if rn is not None:
            rn.prev = rp
        if rp is not None:
            rp.next = rn
        first.prev = root
        root.next = first
        root.prev = None


def _chain_keys(head: _TreeNode) -> list[Any]:
    keys = []
    node: _TreeNode | None = head
    while node is not None:
        keys.append(node.key)
        node = node.next
    return keys


class JavaHashMap(Generic[K, V]):
    """A ``java.util.HashMap`` (default capacity and load factor) whose iteration order is
    Java's, for ``put`` and ``computeIfAbsent`` in any mix.

    ``hash_of`` is the key's ``hashCode()``; ``compare`` its ``compareTo``, needed only when a
    bin grows into a red-black tree and two of its keys have the same spread hash (without it,
    or when it returns 0 for two different keys, Java would fall back to identity hash codes,
    which no emulation can reproduce: :class:`ValueError`). Key equality is Python's, so keys
    must be given in a representation whose ``==`` is Java's ``equals`` (module docstring).

    The table is a dict from bucket index to bin, so that resizing and iterating cost what
    the occupied buckets cost. Plain bins are Python lists of keys (no per-node objects: most
    bins are plain); a tree bin is the first :class:`_TreeNode` of its ``next`` chain, which
    is what iteration follows. For a whole sequence of keys, :func:`java_map_order` gives the
    same order much faster.
    """

    def __init__(
        self, hash_of: Callable[[K], int], compare: Callable[[K, K], int] | None = None
    ) -> None:
        self._hash_of = hash_of
        self._compare = compare
        self._values: dict[K, V] = {}
        self._spreads: dict[K, int] = {}
        self._table: dict[int, Any] = {}
        self._capacity = 0  # 0: not allocated yet (Java allocates lazily)
        self._threshold = 0

    # -- public API ----------------------------------------------------------------------------

    def put(self, key: K, value: V) -> None:
        """``HashMap.put``: a new key is appended to its bin; resize after the insert."""
        if key in self._values:
            self._values[key] = value
            return
        if not self._capacity:
            self._resize()
        self._insert(key, value, self._spread(key), append=True)
        if len(self._values) > self._threshold:
            self._resize()

    def compute_if_absent(self, key: K, factory: Callable[[K], V]) -> V:
        """``HashMap.computeIfAbsent``: resize *before* looking (even for a present key), and a
        new key is prepended to its bin."""
        values = self._values
        if len(values) > self._threshold or not self._capacity:
            self._resize()
        if key in values:
            return values[key]
        value = factory(key)
        self._insert(key, value, self._spread(key), append=False)
        return value

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __getitem__(self, key: K) -> V:
        return self._values[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())

    def keys(self) -> list[K]:
        """The keys in Java's iteration order: bucket by bucket, each bin's chain in order."""
        out: list[K] = []
        tab = self._table
        for index in sorted(tab):
            bin_ = tab[index]
            if bin_.__class__ is list:
                out.extend(bin_)
            else:
                out.extend(_chain_keys(bin_))
        return out

    def items(self) -> list[tuple[K, V]]:
        """(key, value) pairs in Java's iteration order."""
        values = self._values
        return [(key, values[key]) for key in self.keys()]

    def capacity(self) -> int:
        """The current table length (0 before the first insert)."""
        return self._capacity

    # -- internals -----------------------------------------------------------------------------

    def _spread(self, key: K) -> int:
        """``HashMap.hash``: the hashCode with its high half xored into the low (signed)."""
        h = self._hash_of(key)
        return h ^ ((h & _M32) >> 16)

    def _insert(self, key: K, value: V, spread: int, append: bool) -> None:
        self._spreads[key] = spread
        self._values[key] = value
        tab = self._table
        index = spread & (self._capacity - 1)
        bin_ = tab.get(index)
        if bin_ is None:
            tab[index] = [key]
        elif bin_.__class__ is list:
            # put treeifies when the chain had >= 8 nodes before appending (binCount >= 7
            # counts the nodes after the first); computeIfAbsent when it had >= 7.
            if append:
                bin_.append(key)
                if len(bin_) > _TREEIFY_THRESHOLD:
                    self._treeify_bin(index)
            else:
                bin_.insert(0, key)
                if len(bin_) >= _TREEIFY_THRESHOLD:
                    self._treeify_bin(index)
        else:
            self._put_tree_val(bin_, spread, key)

    def _grow_to(self, capacity: int) -> None:
        """Resize until the table has ``capacity`` buckets (a timeline imposed from outside)."""
        while self._capacity < capacity:
            self._resize()

    def _resize(self) -> None:
        """Double the table, splitting each bin into lo (stays) and hi (+oldCap), in order."""
        old_cap = self._capacity
        if not old_cap:
            self._capacity = _INITIAL_CAPACITY
            self._threshold = _INITIAL_CAPACITY * 3 // 4
            return
        self._capacity *= 2
        self._threshold *= 2
        old = self._table
        tab: dict[int, Any] = {}
        self._table = tab
        spreads = self._spreads
        for j, bin_ in old.items():
            if bin_.__class__ is not list:
                self._split_tree(bin_, j, old_cap)
            elif len(bin_) == 1:
                tab[j + old_cap if spreads[bin_[0]] & old_cap else j] = bin_
            else:
                hi = [key for key in bin_ if spreads[key] & old_cap]
                if not hi:
                    tab[j] = bin_
                elif len(hi) == len(bin_):
                    tab[j + old_cap] = bin_
                else:
                    tab[j] = [key for key in bin_ if not spreads[key] & old_cap]
                    tab[j + old_cap] = hi

    def _treeify_bin(self, index: int) -> None:
        """``treeifyBin``: a small table grows instead; otherwise the chain becomes a tree."""
        if self._capacity < _MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        tab = self._table
        spreads = self._spreads
        head: _TreeNode | None = None
        for key in reversed(tab[index]):
            node = _TreeNode(spreads[key], key, head)
            if head is not None:
                head.prev = node
            head = node
        assert head is not None
        tab[index] = head
        self._treeify(head)

    def _tie(self, key: Any, node: _TreeNode) -> int:
        """Tree order for equal spread hashes: ``compareTo``."""
        if self._compare is None:
            raise ValueError("keys with equal hashes met in a tree bin: a compare is needed")
        direction = self._compare(key, node.key)
        if direction == 0:
            raise ValueError(f"compare({key!r}, {node.key!r}) == 0 for different keys: Java "
                             "would order them by identity hash codes")
        return direction

    def _treeify(self, head: _TreeNode) -> None:
        """``TreeNode.treeify``: insert the chain's nodes in chain order, then root to front."""
        root: _TreeNode | None = None
        x: _TreeNode | None = head
        while x is not None:
            nxt = x.next
            x.left = x.right = None
            if root is None:
                x.parent = None
                x.red = False
                root = x
            else:
                h = x.hash
                p = root
                while True:
                    ph = p.hash
                    direction = -1 if ph > h else 1 if ph < h else self._tie(x.key, p)
                    xp = p
                    child = p.left if direction <= 0 else p.right
                    if child is None:
                        x.parent = xp
                        if direction <= 0:
                            xp.left = x
                        else:
                            xp.right = x
                        root = _balance_insertion(root, x)
                        break
                    p = child
            x = nxt
        assert root is not None
        _move_root_to_front(self._table, self._capacity, root)

    def _put_tree_val(self, first: _TreeNode, spread: int, key: Any) -> None:
        """``TreeNode.putTreeVal`` for a new key: link it right after its tree parent."""
        root = first
        while root.parent is not None:
            root = root.parent
        p = root
        while True:
            ph = p.hash
            direction = -1 if ph > spread else 1 if ph < spread else self._tie(key, p)
            xp = p
            child = p.left if direction <= 0 else p.right
            if child is None:
                xpn = xp.next
                x = _TreeNode(spread, key, xpn)
                if direction <= 0:
                    xp.left = x
                else:
                    xp.right = x
                xp.next = x
                x.parent = x.prev = xp
                if xpn is not None:
                    xpn.prev = x
                _move_root_to_front(self._table, self._capacity, _balance_insertion(root, x))
                return
            p = child

    def _split_tree(self, first: _TreeNode, index: int, bit: int) -> None:
        """``TreeNode.split`` on resize: lo/hi chains in order; a half of <= 6 nodes becomes a
        plain list, a bigger one is re-treeified unless the other half is empty."""
        tab = self._table
        halves: list[list[_TreeNode]] = [[], []]
        node: _TreeNode | None = first
        while node is not None:
            halves[1 if node.hash & bit else 0].append(node)
            node = node.next
        for half, slot in zip(halves, (index, index + bit)):
            if not half:
                continue
            if len(half) <= _UNTREEIFY_THRESHOLD:
                tab[slot] = [n.key for n in half]
                continue
            prev: _TreeNode | None = None
            for n in half:
                n.prev = prev
                if prev is not None:
                    prev.next = n
                prev = n
            half[-1].next = None
            tab[slot] = half[0]
            if halves[0] and halves[1]:
                self._treeify(half[0])


def java_map_order(keys: Iterable[K], kind: str, method: str = "put") -> list[K]:
    """Iteration order of a ``HashMap`` of ``kind`` keys after ``method`` ("put" or
    "compute_if_absent") was called for each key in turn.

    Pass every call, repeats included: a ``computeIfAbsent`` on a present key still performs
    a pending resize, which can change the final order. Equivalent to replaying the calls on a
    :class:`JavaHashMap`, but vectorized (see :func:`_bulk_order`) for millions of keys.
    """
    if method not in ("put", "compute_if_absent"):
        raise ValueError(f"method must be 'put' or 'compute_if_absent', got {method!r}")
    calls = list(keys)
    distinct = list(dict.fromkeys(calls))
    if not distinct:
        return []
    # Repeats only matter through computeIfAbsent's lazy resize, which the next new key would
    # trigger anyway: all that counts is whether some call came after the last new key.
    trailing = calls.index(calls[-1]) != len(calls) - 1
    order = _bulk_order(distinct, java_hash_codes(distinct, kind), kind, append=method == "put",
                        trailing=trailing)
    objects = np.empty(len(distinct), object)
    objects[:] = distinct
    return objects[order].tolist()


def _bulk_order(
    keys: list[Any] | np.ndarray,
    hashes: np.ndarray,
    kind: str,
    append: bool,
    trailing: bool,
) -> np.ndarray:
    """Java's iteration order (as indices into ``keys``) of a ``HashMap`` into which the
    distinct ``keys`` were inserted in order, appending (put) or prepending (computeIfAbsent).

    While no bin ever becomes a tree, a bin's chain is its keys in insertion order (put) or
    reversed (computeIfAbsent), since resizes split chains preserving order: a sort by (final
    bucket, rank) gives the order. Bins that reach the treeify threshold are found per capacity
    epoch with a bincount; every key whose bucket lineage did (same bucket at that capacity) is
    replayed exactly on a :class:`JavaHashMap` that follows the real map's resize timeline
    (in C where compiled: ``kernels.c`` ``java_map_replay``). While the table is smaller than
    64, treeifyBin only resizes, which shifts that timeline: those first few inserts are
    simulated one by one.
    """
    count = len(keys)
    spreads = hashes.view(_U32) ^ (hashes.view(_U32) >> _U32(16))
    limit = _TREEIFY_THRESHOLD + 1 if append else _TREEIFY_THRESHOLD  # chain length that treeifies
    capacity, threshold = _INITIAL_CAPACITY, _INITIAL_CAPACITY * 3 // 4
    epochs = [(capacity, 0)]  # (capacity, index of the first key inserted at it)

    def grow(first_key: int) -> None:
        nonlocal capacity, threshold
        capacity, threshold = capacity * 2, threshold * 2
        epochs.append((capacity, first_key))

    k = 0
    while k < count and capacity < _MIN_TREEIFY_CAPACITY:
        if not append and k > threshold:  # computeIfAbsent resizes before inserting
            grow(k)
            continue
        mask = _U32(capacity - 1)
        chain = int(np.count_nonzero((spreads[:k + 1] & mask) == (spreads[k] & mask)))
        k += 1
        if chain >= limit:  # treeifyBin on a table smaller than 64 resizes instead
            grow(k)
        if append and k > threshold:  # put resizes after inserting
            grow(k)
    while threshold + 1 < count:
        grow(threshold + 1)
    final = capacity * 2 if (append or trailing) and count > threshold else capacity

    # A bin can only become a tree in an epoch whose bincount (over the keys inserted by its
    # end) reaches the limit; all keys sharing that bucket's low bits are replayed exactly.
    # (Each epoch counts only the keys inserted by its end: twice the keys over all epochs.)
    hot = np.zeros(count, bool)
    for (capacity, first), (_, end) in zip(epochs, epochs[1:] + [(0, count)]):
        if capacity >= _MIN_TREEIFY_CAPACITY and end > first:
            mask = _U32(capacity - 1)
            full = np.bincount(spreads[:end] & mask, minlength=capacity) >= limit
            if full.any():
                hot |= full[spreads & mask]

    rank = np.arange(count, dtype=np.int64)
    if not append:
        rank = -rank
    hot_indices = np.nonzero(hot)[0]
    if len(hot_indices):
        starts = np.array([first for _, first in epochs])
        timeline = np.array([cap for cap, _ in epochs])[
            np.searchsorted(starts, hot_indices, "right") - 1]
        hot_keys = keys[hot_indices] if isinstance(keys, np.ndarray) else [keys[i] for i in hot_indices.tolist()]
        rank[_replay(hot_keys, hot_indices, spreads[hot_indices].view(np.int32), timeline, final, kind,
                     append)] = np.arange(len(hot_indices))
    buckets = spreads & _U32(final - 1)
    index_bits = max(1, (count - 1).bit_length())
    if (final - 1).bit_length() + 2 * index_bits + 1 <= 64:
        # one sort of (bucket, rank, index) packed in a uint64, 5x faster than the lexsort
        packed = (buckets.astype(np.uint64) << np.uint64(2 * index_bits + 1)) \
            | ((rank + count).astype(np.uint64) << np.uint64(index_bits)) | np.arange(count, dtype=np.uint64)
        packed.sort()
        return (packed & np.uint64((1 << index_bits) - 1)).astype(np.int64)
    return np.lexsort((rank, buckets))


def _replay(keys: list[Any] | np.ndarray, indices: np.ndarray, spreads: np.ndarray, timeline: np.ndarray,
            final: int, kind: str, append: bool) -> np.ndarray:
    """``indices`` (of the distinct ``keys`` given, their ``spreads``) in the iteration order of
    a :class:`JavaHashMap` into which they were inserted in turn, each once the table had
    ``timeline`` buckets, the table then grown to ``final``: in C where compiled."""
    if _kernels is not None:
        order = _kernels.java_map_replay(np.ascontiguousarray(spreads, np.int32), _compare_ranks(keys, kind),
                                         np.ascontiguousarray(timeline, np.int64), final, append)
        return indices[np.frombuffer(order, np.int64)]
    exact: JavaHashMap[Any, int] = JavaHashMap(hash_function(kind), key_compare(kind))  # spreads are given
    with collector.paused():  # tree nodes are many small cyclic objects
        for key, i, spread, cap in zip(keys.tolist() if isinstance(keys, np.ndarray) else keys,
                                       indices.tolist(), spreads.tolist(), timeline.tolist()):
            if cap != exact._capacity:
                exact._grow_to(cap)
            exact._insert(key, i, spread, append)
        exact._grow_to(final)
    return np.array([i for _, i in exact.items()], np.int64)


def _compare_ranks(keys: list[Any] | np.ndarray, kind: str) -> np.ndarray:
    """Distinct keys as int64 ranks whose order is :func:`key_compare`'s: the value (ints,
    longs, booleans), :func:`_float_order` of the bits (floats, doubles), else the place in
    the sorted keys."""
    if kind in ("int", "long", "boolean"):
        return np.array(keys, np.int64)
    if kind in ("float", "double"):
        bits = np.array(keys, np.uint64)
        sign = np.uint64(1 << (31 if kind == "float" else 63))
        magnitude = (bits & (sign - np.uint64(1))).view(np.int64)
        return np.where(bits & sign, -magnitude - 1, magnitude)
    encode = (lambda s: s.encode("utf-16-be", "surrogatepass")) if kind == "string" else None
    ranks = np.empty(len(keys), np.int64)
    ranks[sorted(range(len(keys)), key=list(keys if encode is None else map(encode, keys)).__getitem__)] \
        = np.arange(len(keys))
    return ranks


def bitmap_key_order(keys: Iterable[K], kind: str) -> list[K]:
    """The order of a bitmap index's entries (V1) and bodies (V1 and V2): ``id2bitmap`` is a
    ``HashMap`` filled by ``computeIfAbsent`` once per non-null row, in row order.

    ``keys`` are the non-null rows' keys (repeats included), in this module's representation:
    timestamps as their long key, floats via :func:`float_key`, strings as UTF-8 bytes with
    ``kind="binary_string"``.
    """
    return java_map_order(keys, kind, "compute_if_absent")


def bitmap_distinct_order(distinct: Sequence[Any] | np.ndarray, kind: str, trailing: bool) -> np.ndarray:
    """:func:`bitmap_key_order` from the distinct keys alone, as indices into ``distinct``.

    ``distinct`` holds the non-null keys in order of first occurrence (this module's
    representation: a list, or a numpy integer array for the integer, float and double kinds,
    floats as their bits); ``trailing`` says whether a repeated key came after the last new
    one, i.e. whether the last non-null row's key had occurred before. That is all that
    ``computeIfAbsent``'s lazy resize depends on (see :func:`java_map_order`), so this equals
    ``bitmap_key_order(rows)`` without the list of every row.
    """
    if not len(distinct):
        return np.zeros(0, np.int64)
    if kind not in _HASHES:
        raise ValueError(f"unknown key kind {kind!r}; expected one of {KINDS}")
    hashes = java_hash_codes(distinct, kind)
    keys = distinct if isinstance(distinct, np.ndarray) else list(distinct)
    return _bulk_order(keys, hashes, kind, append=False, trailing=bool(trailing))


def string_key_order(strings: Iterable[str], method: str = "put") -> list[str]:
    """Iteration order of a ``HashMap<String, ...>`` (column names, type names, file names)."""
    return java_map_order(strings, "string", method)


# ----------------------------------------------------------------------------------------------
# fastutil IntOpenHashSet (spec Appendix B)
# ----------------------------------------------------------------------------------------------


def _f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _array_size(expected: int) -> int:
    """``HashCommon.arraySize(expected, 0.75f)``: the division is float arithmetic in Java."""
    needed = math.ceil(_f32(_f32(float(expected)) / 0.75))
    return max(2, 1 << (needed - 1).bit_length() if needed > 1 else 1)


def _max_fill(n: int) -> int:
    """``HashCommon.maxFill(n, 0.75f)``."""
    return min(-(-3 * n // 4), n - 1)


def int_open_hash_set_order(values: Iterable[int], expected: int = 16) -> list[int]:
    """Iteration order of a fastutil ``IntOpenHashSet(expected)`` after ``add`` of each value:
    0 first if present, then the slots from high to low (linear probing, ``HashCommon.mix``).

    A repeated ``add`` changes nothing, so only first occurrences are replayed; their ``mix``
    is computed up front with numpy, and slots hold 1-based indices into them (0 = empty).
    """
    if expected < 0:
        raise ValueError("expected must be non-negative")
    distinct = list(dict.fromkeys(np.array(list(values), np.int64).astype(np.int32).tolist()))
    h = np.array(distinct, np.int32).view(_U32) * _U32(0x9E3779B9)
    mixes = [0, *(h ^ (h >> _U32(16))).tolist()]
    zero = distinct.index(0) + 1 if 0 in distinct else 0  # containsNull: no slot, but a size
    n = _array_size(expected)
    mask = n - 1
    max_fill = _max_fill(n)
    slots = [0] * n
    size = 0
    while size < len(distinct):
        # fastutil rehashes to arraySize(size + 1) once an add makes size exceed maxFill
        stop = min(len(distinct), max_fill + 1)
        for ref in range(size + 1, stop + 1):
            if ref != zero:
                pos = mixes[ref] & mask
                while slots[pos]:
                    pos = (pos + 1) & mask
                slots[pos] = ref
        size = stop
        if size > max_fill:
            n = _array_size(size + 1)
            mask = n - 1
            max_fill = _max_fill(n)
            old = slots
            slots = [0] * n
            for ref in reversed(old):  # rehash walks the old slots from high to low
                if ref:
                    pos = mixes[ref] & mask
                    while slots[pos]:
                        pos = (pos + 1) & mask
                    slots[pos] = ref
    order = [0] if zero else []
    order.extend(distinct[ref - 1] for ref in reversed(slots) if ref)
    return order
