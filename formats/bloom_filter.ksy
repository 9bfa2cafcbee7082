meta:
  id: bloom_filter
  title: Apache Paimon bloom-filter file index
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: be
doc: |
  The `bloom-filter` file index of one column of one data file (`BloomFilterFileIndex`, backed
  by `BloomFilter64`): the number of hash functions `k`, then the bit set, nothing else. It is
  one blob of a file-index container (file_index.ksy); the blob's length gives the number of
  bits, `numBits = 8 * (length - 4)`.

  Sizing (Java double arithmetic), from `file-index.bloom-filter.<col>.items` (default
  1000000) and `.fpp` (default 0.1):

  * `nb = (int) (-items * ln(fpp) / (ln 2)^2)`, truncated;
  * `numBits = nb + (8 - nb % 8)`: always 1 to 8 bits more, so at least 8;
  * `k = max(1, (int) Math.round(numBits / items * ln 2))`;
  * the defaults give 4792536 bits (599071 bytes) and k = 3; items=10, fpp=0.1 gives 48 bits
    and k = 3; items=0 gives 8 bits and k = 1.

  Hashing (`FastHash`) turns each non-null value into a 64-bit hash; nulls are not added:

  * integers, DATE, TIME, TIMESTAMP (millis if precision <= 3, else micros), FLOAT
    (`floatToIntBits`, sign-extended) and DOUBLE (`doubleToLongBits`) are sign-extended to a
    64-bit `x` and mixed with Thomas Wang's 64-bit hash, with wrapping arithmetic and
    arithmetic (sign-propagating) right shifts:
    `x = ~x + (x << 21); x ^= x >> 24; x = x + (x << 3) + (x << 8); x ^= x >> 14;
    x = x + (x << 2) + (x << 4); x ^= x >> 28; x += x << 31`;
  * CHAR/VARCHAR/STRING (UTF-8 bytes) and BINARY/VARBINARY are hashed with XXH64, seed 0;
  * BOOLEAN, DECIMAL and complex types are not supported.

  Bits set for a hash `h` (`BloomFilter64.addHash`): `h1` = low 32 bits and `h2` = high 32 bits,
  both as signed ints; for `i` in 1..k, `c = h1 + i * h2` (32-bit wrap-around), `c = ~c` if
  negative, bit `c % numBits` is set. Bits are numbered LSB-first: bit `p` is
  `1 << (p % 8)` of byte `p / 8`. A probe whose bits are not all set proves the value absent.
  Example: INT values [1, 2, null, 3] with items=10, fpp=0.1 give `00000003 892001504000`.
doc-ref:
  - https://paimon.apache.org/docs/master/concepts/spec/fileindex/
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/bloomfilter/BloomFilterFileIndex.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/utils/BloomFilter64.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/bloomfilter/FastHash.java
seq:
  - id: num_hash_functions
    -orig-id: numHashFunctions
    type: s4
    valid:
      min: 1
      max: 255
    doc: |
      Number of hash functions `k`, written as a big-endian int. Java's reader rebuilds it as
      `(b0 << 24) + (b1 << 16) + (b2 << 8) + b3` over *signed* bytes, which is right only
      while each byte is below 0x80: a k of 128..255 would be read as k - 256 (no bit tested,
      every probe passes). The writer's k is about log2(1/fpp), at least 1: going past 255
      would take an fpp below about 1e-76, so larger values are rejected as corrupt.
  - id: bitset
    size-eos: true
    doc: |
      The `numBits / 8` bytes of the bit set, LSB-first (bit `p` is `1 << (p % 8)` of byte
      `p / 8`). Written even when no row was added; never empty, as `numBits >= 8`. A reader
      must refuse an empty one (Java's divides by zero on the first probe); the spec cannot
      say "at least one byte" in a form every Kaitai target compiles and our Python parsers
      run, so paimon_schema checks it after parsing.
instances:
  num_bits:
    value: bitset.length * 8
    doc: Number of bits in the filter, the modulus of the bit positions.
