meta:
  id: bitmap_index
  title: Apache Paimon bitmap file index (V1 and V2)
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: be
  imports:
    - paimon_common
    - roaring_bitmap
doc: |
  The `bitmap` file index of one column of one data file: for every distinct value (key) the
  set of rows holding it, as a RoaringBitmap (roaring_bitmap.ksy), plus a bitmap of the null
  rows. It is one blob of a file-index container (file_index.ksy). Rows are numbered from 0 in
  write order and every written value, null included, takes one row number.

  Both versions start with the same head: version, row count, number of distinct non-null keys,
  a null flag and, with nulls, the null bitmap's offset. Keys are encoded as the column's data
  type dictates (`paimon_common::key`), so the reader passes `key_kind`; the blob does not say
  which type it holds.

  Two optimizations shape every offset:

  * a key (or the null value) seen in exactly one row `r` stores no bitmap: its offset is
    `-1 - r`, always negative;
  * stored bitmaps are written after `runOptimize()`, back to back in the *body*: first the
    null bitmap if it has two or more rows (at body offset 0), then the keys' bitmaps in the
    iteration order of Java's `HashMap` of keys (not sorted). Body offsets are relative to the
    body start.

  Null handling (the same in both versions):

  | nulls | has_null | ofs_null_bitmap | V2 len_null_bitmap                   | in body      |
  |-------|----------|-----------------|--------------------------------------|--------------|
  | 0     | 0        | absent          | absent                               | no           |
  | 1 (r) | 1        | `-1 - r`        | 18, length of a bitmap *not* stored  | no           |
  | >= 2  | 1        | 0               | serialized length                    | yes, first   |

  **V1** (legacy) lists every key with its offset in HashMap order and stores no lengths. Java's
  reader derives them: walking the entries in file order from "previous offset =
  ofs_null_bitmap", each stored offset minus the previous stored one is the previous bitmap's
  length, and the last stored bitmap is read by a streaming, self-delimiting roaring
  deserialize. So a V1 body must be in entry order, null bitmap first. The body starts right
  after the last entry.

  **V2** (default since 1.1) sorts all entries by the key comparator (signed integers,
  `false < true`, floats as `Float.compareTo`: -0.0 < 0.0 < NaN, strings byte-wise unsigned
  then shorter first), packs them into *index blocks* of at most `index-block-size` bytes
  (default 16 KiB; a block counts 4 bytes plus `8 + key size` per entry and may be exactly the
  limit), and writes a secondary index of each block's first key and offset. A lookup reads the
  head, binary-searches the secondary index, then reads one block and one bitmap; each entry
  carries an explicit bitmap length (`-1` for singletons). The body order is still HashMap
  order.

  Edge cases of the V2 writer:

  * zero rows: `02 00000000 00000000 00 00000000 00000000` (18 bytes, no blocks);
  * all rows null (2 rows): head with `ofs_null_bitmap` 0 and `len_null_bitmap` 20, 0 blocks,
    `len_index_blocks` 0, then the null bitmap {0,1};
  * one null among other values: `ofs_null_bitmap` = `-1 - row`, `len_null_bitmap` 18, no null
    bitmap in the body;
  * a key seen once: offset `-1 - row`, length -1, nothing in the body.

  Java's reader takes the version byte unsigned and rejects versions above 2; it reads keys
  with the type of the predicate's field.
doc-ref:
  - https://paimon.apache.org/docs/master/concepts/spec/fileindex/
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/bitmap/BitmapFileIndex.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/bitmap/BitmapFileIndexMeta.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/bitmap/BitmapFileIndexMetaV2.java
params:
  - id: key_kind
    type: u1
    enum: paimon_common::key_kind
    doc: How keys are encoded; chosen by the reader from the indexed column's data type.
seq:
  - id: version
    type: u1
    enum: version
    valid:
      any-of:
        - version::v1
        - version::v2
    doc: Layout version; 2 unless `file-index.bitmap.<col>.version` is 1.
  - id: num_rows
    -orig-id: rowCount
    type: s4
    valid:
      min: 0
    doc: Number of rows written (Java's rowCount), nulls included.
  - id: num_keys
    -orig-id: nonNullBitmapNumber
    type: s4
    valid:
      min: 0
    doc: Number of distinct non-null keys, singletons included (Java's nonNullBitmapNumber).
  - id: has_null
    -orig-id: hasNullValue
    type: u1
    valid:
      any-of: [0, 1]
    doc: |
      1 if at least one row is null (`writeBoolean`). Java's `readBoolean` would take any
      non-zero byte as true; writers only write 0 or 1.
  - id: ofs_null_bitmap
    -orig-id: nullValueOffset
    type: s4
    if: has_null == 1
    valid:
      max: 0
    doc: |
      Body offset of the null bitmap, which is always first in the body (0), or `-1 - row`
      when exactly one row is null and no bitmap is stored.
  - id: index
    type:
      switch-on: version
      cases:
        'version::v1': index_v1
        'version::v2': index_v2
    doc: The rest of the head, which differs between the versions.
instances:
  is_null_bitmap_stored:
    value: has_null == 1 and ofs_null_bitmap >= 0
    doc: Whether the null bitmap is stored in the body (two or more null rows).
  null_row:
    value: -1 - ofs_null_bitmap
    if: has_null == 1 and ofs_null_bitmap < 0
    doc: The only null row, when exactly one row is null.
  ofs_body:
    value: 'version == version::v1 ? index.as<index_v1>.ofs_body : index.as<index_v2>.ofs_body'
    doc: Stream position of the body, the base of every non-negative bitmap offset.
enums:
  version:
    1:
      id: v1
      -orig-id: VERSION_1
      doc: 'BitmapFileIndex.VERSION_1: every key with its offset, no lengths (legacy).'
    2:
      id: v2
      -orig-id: VERSION_2
      doc: 'BitmapFileIndex.VERSION_2: sorted index blocks with explicit lengths (default since Paimon 1.1).'
types:
  index_v1:
    -orig-id: BitmapFileIndexMeta
    doc: |
      V1 (BitmapFileIndexMeta): every key and its offset, in the writer's HashMap order; the
      body follows directly. No lengths are stored (see the top-level doc for how Java derives
      them); each stored bitmap is self-delimiting.
    seq:
      - id: entries
        type: entry_v1
        repeat: expr
        repeat-expr: _root.num_keys
        doc: One entry per distinct non-null key, in HashMap iteration order (not sorted).
      - id: body_mark
        type: paimon_common::position_mark(_io.pos)
        doc: Marks the body start, right after the last entry.
    instances:
      ofs_body:
        value: body_mark.ofs
        doc: Stream position of the body.
      null_bitmap:
        pos: ofs_body + _root.ofs_null_bitmap
        type: roaring_bitmap
        if: _root.is_null_bitmap_stored
        doc: The null rows, first in the body, when two or more rows are null.
  entry_v1:
    doc: A V1 key and where its rows are.
    -webide-representation: 'offset {ofs_bitmap:dec}'
    seq:
      - id: key
        type: paimon_common::key(_root.key_kind)
        doc: The key.
      - id: ofs_bitmap
        -orig-id: offset
        type: s4
        doc: Body offset of the key's bitmap, or `-1 - row` for a key seen in exactly one row.
    instances:
      is_singleton:
        value: ofs_bitmap < 0
        doc: Whether the key occurs in exactly one row and has no stored bitmap.
      row:
        value: -1 - ofs_bitmap
        if: is_singleton
        doc: The key's only row.
      bitmap:
        pos: _root.ofs_body + ofs_bitmap
        type: roaring_bitmap
        if: not is_singleton
        doc: |
          The key's rows, a portable RoaringBitmap. V1 stores no length: the bitmap ends where
          its own containers end (Java derives the length from the next stored offset, and
          streams the last one).
  index_v2:
    -orig-id: BitmapFileIndexMetaV2
    doc: |
      V2 (BitmapFileIndexMetaV2): the null bitmap's length, a secondary index over the index
      blocks, the total size of the index blocks, then the blocks themselves and the body. Only
      the head up to `len_index_blocks` is parsed in sequence; blocks and bitmaps are
      positioned instances, read when used.
    seq:
      - id: len_null_bitmap
        -orig-id: nullBitmapLength
        type: s4
        if: _root.has_null == 1
        valid:
          min: 0
        doc: |
          Serialized length of the null bitmap. With a single null row it is the length of a
          one-row bitmap (18) although that bitmap is not stored.
      - id: num_blocks
        -orig-id: bitmapBlockNumber
        type: s4
        valid:
          min: 0
        doc: Number of index blocks; 0 when there are no non-null keys.
      - id: blocks
        type: block_ref(_index)
        repeat: expr
        repeat-expr: num_blocks
        doc: The secondary index, one entry per index block, ascending by first key.
      - id: len_index_blocks
        -orig-id: bitmapBodyOffset
        type: s4
        valid:
          min: 0
        doc: Total size of all index blocks (Java's bitmapBodyOffset); the body follows them.
      - id: index_blocks_mark
        type: paimon_common::position_mark(_io.pos)
        doc: Marks the start of the first index block, right after `len_index_blocks`.
    instances:
      ofs_index_blocks:
        value: index_blocks_mark.ofs
        doc: Stream position of the first index block (Java's indexBlockStart).
      ofs_body:
        value: ofs_index_blocks + len_index_blocks
        doc: Stream position of the body (Java's bodyStart).
      null_bitmap:
        pos: ofs_body + _root.ofs_null_bitmap
        size: len_null_bitmap
        if: _root.is_null_bitmap_stored
        doc: |
          The null rows, first in the body, when two or more rows are null: one portable
          RoaringBitmap (roaring_bitmap.ksy), kept as bytes for a bitmap library to decode.
  block_ref:
    doc: One secondary-index entry, pointing at an index block.
    -webide-representation: 'block at {ofs_block:dec}, {len_block:dec} bytes'
    params:
      - id: index
        type: s4
        doc: Position of the entry in the secondary index, for finding where its block ends.
    seq:
      - id: first_key
        type: paimon_common::key(_root.key_kind)
        doc: The key of the block's first entry, the smallest in the block.
      - id: ofs_block
        -orig-id: offset
        type: s4
        valid:
          min: 0
        doc: |
          Offset of the block from the start of the first index block. The first block is at 0
          and each next block starts where the previous one ends.
    instances:
      len_block:
        value: '(index + 1 < _parent.num_blocks ? _parent.blocks[index + 1].ofs_block : _parent.len_index_blocks) - ofs_block'
        doc: Byte length of the block, up to the next block's offset or `len_index_blocks`.
      block:
        pos: _parent.ofs_index_blocks + ofs_block
        size: len_block
        type: index_block
        doc: |
          The index block, read on its own without the other blocks and confined to its
          `len_block` bytes, so a damaged `num_entries` cannot read past it.
  index_block:
    -orig-id: BitmapIndexBlock
    doc: |
      A run of consecutive entries in key order. The writer closes a block when the next entry
      would make it larger than `index-block-size`.
    -webide-representation: '{num_entries:dec} entries'
    seq:
      - id: num_entries
        -orig-id: entryNum
        type: s4
        valid:
          min: 1
        doc: Number of entries in the block; a block is created for its first entry.
      - id: entries
        type: entry_v2
        repeat: expr
        repeat-expr: num_entries
        doc: The entries, ascending by key.
  entry_v2:
    doc: A V2 key, where its bitmap is and how long it is.
    -webide-representation: 'offset {ofs_bitmap:dec}, {len_bitmap:dec} bytes'
    seq:
      - id: key
        type: paimon_common::key(_root.key_kind)
        doc: The key.
      - id: ofs_bitmap
        -orig-id: offset
        type: s4
        doc: Body offset of the key's bitmap, or `-1 - row` for a key seen in exactly one row.
      - id: len_bitmap
        -orig-id: length
        type: s4
        valid:
          min: -1
        doc: |
          Serialized length of the key's bitmap; -1 for a singleton. (Java's reader would also
          stream-read a stored bitmap of length -1; no writer produces one.)
    instances:
      is_singleton:
        value: ofs_bitmap < 0
        doc: Whether the key occurs in exactly one row and has no stored bitmap.
      row:
        value: -1 - ofs_bitmap
        if: is_singleton
        doc: The key's only row.
      bitmap:
        io: _root._io
        pos: _root.ofs_body + ofs_bitmap
        size: len_bitmap
        if: ofs_bitmap >= 0 and len_bitmap >= 0
        doc: |
          The key's rows: one portable RoaringBitmap (roaring_bitmap.ksy), kept as bytes for a
          bitmap library to decode.
