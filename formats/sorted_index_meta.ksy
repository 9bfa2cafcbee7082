meta:
  id: sorted_index_meta
  title: Apache Paimon sorted global index file metadata (_INDEX_META of btree and bitmap)
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: le
doc: |
  The `_INDEX_META` bytes an index manifest entry's `_GLOBAL_INDEX` record carries for a
  sorted global index file (`btree`, `bitmap`): the file's smallest and largest non-null key,
  in the index's key bytes (bitmap_global_index.ksy describes them), and whether it holds NULL
  rows, so a reader can skip files whose key range cannot match. Little-endian, as Paimon's
  `MemorySliceOutput`.

  A key that is NULL (a file of NULL rows only) is written with length 0 and flagged in
  `null_key_flags`; metadata from before the flags (no `format_version`) marks an all-null
  file by two empty keys with `has_nulls`, which cannot tell an empty string key from NULL.
  Java reads the version byte only when at least two bytes follow `has_nulls`, the flags only
  after version 1, and ignores anything after them.
doc-ref:
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/globalindex/SortedIndexFileMeta.java
seq:
  - id: len_first_key
    type: s4
    valid:
      min: 0
    doc: Length of `first_key` (0 when it is NULL).
  - id: first_key
    size: len_first_key
    doc: The smallest non-null key of the file (by the index's order).
    -orig-id: firstKey
  - id: len_last_key
    type: s4
    valid:
      min: 0
    doc: Length of `last_key` (0 when it is NULL).
  - id: last_key
    size: len_last_key
    doc: The largest non-null key of the file.
    -orig-id: lastKey
  - id: has_nulls
    type: u1
    doc: 1 when the file holds NULL rows; Java reads any other value as false.
    -orig-id: hasNulls
  - id: null_flags
    type: null_flags
    if: _io.size - _io.pos >= 2
    doc: |
      Present when at least two bytes follow `has_nulls` (Java reads nothing otherwise). Without
      it, two empty keys with `has_nulls` = 1 mean an all-null file (legacy metadata).
types:
  null_flags:
    doc: The format version and, for version 1, which keys are NULL.
    seq:
      - id: format_version
        type: u1
        enum: format_version
        doc: 1 introduces `null_key_flags`; Java ignores the byte after any other value.
        -orig-id: FORMAT_VERSION_WITH_NULL_FLAGS
      - id: null_key_flags
        type: u1
        if: format_version == format_version::with_null_flags
        doc: Bit 0 (`FIRST_KEY_IS_NULL`), bit 1 (`LAST_KEY_IS_NULL`).
        -orig-id: nullKeyFlags
enums:
  format_version:
    1:
      id: with_null_flags
      doc: Followed by `null_key_flags` (`FORMAT_VERSION_WITH_NULL_FLAGS`).
