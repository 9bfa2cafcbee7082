meta:
  id: bitmap_global_index
  title: Apache Paimon bitmap global index file
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: be
  imports:
    - deletion_vectors
    - paimon_common
doc: |
  A bitmap *global* index maps each value of one column of a data-evolution table
  (`row-tracking.enabled` + `data-evolution.enabled`) to the set of row ids that hold it. Row
  ids are relative to the row range the index manifest records for the file
  (`_GLOBAL_INDEX._ROW_RANGE_START`), so a file covers at most 2^63 rows and its bitmaps are
  64-bit Roaring bitmaps (`RoaringNavigableMap64`: Roaring64NavigableMap's portable format,
  the `bitmap64` of deletion_vectors.ksy with only its non-empty buckets written). Unlike the
  per-data-file bitmap index (bitmap_index.ksy) it is one file of its own,
  `bitmap-global-index-<uuid>.index` in the table's `index/` directory, read from its end:

  * a 48-byte big-endian **footer** (magic "BGIX") locates the null-rows bitmap, the
    non-null-rows bitmap and the **index block**;
  * the index block lists the **dictionary blocks**, each by its first key;
  * a dictionary block lists, in key order, each distinct key and where its bitmap is.

  A point lookup therefore reads the footer, the index block, one dictionary block and one
  bitmap. Index and dictionary blocks are *compressible blocks*: the payload, then a 5-byte
  trailer of compression type and a little-endian CRC-32 (Java calls it `crc32c`, but it is
  zlib's CRC-32, `java.util.zip.CRC32`) over the payload followed by the compression-type
  byte. Their counts, key lengths, offsets and lengths are unsigned LEB128 varints
  (`VarLengthIntUtils`); a block's length (`len_index_block`, `len_block`) counts the payload
  only, without the trailer.
  Keys are the column's `KeySerializer` bytes: little-endian for numbers (TINYINT 1 byte,
  SMALLINT 2, INT/DATE/TIME 4, BIGINT 8, FLOAT/DOUBLE the IEEE bits with Java's canonical
  NaN), BOOLEAN 0/1, strings as UTF-8, DECIMAL the unscaled value as a little-endian int64
  when the precision is at most 18 and as Java's big-endian two's complement
  `BigInteger.toByteArray()` above, TIMESTAMP the epoch millis as a little-endian int64 plus,
  above precision 3, the nanos of the millisecond as a varint.

  **Key order, and the two versions.** The footer's `version` says how the keys are ordered,
  which decides how a lookup searches them. The two versions are those of Java's
  `BitmapGlobalIndexFormat` at commit 1e2a322e ("Stream sorted bitmap index writes", the head
  of apache/paimon#8613), whose reader reads both by the footer's version:

  * **version 1** (`SERIALIZED_KEY_ORDER_VERSION`): keys sorted by their serialized bytes,
    compared unsigned (`SerializedKey.compareTo`), so little-endian numbers are *not* in
    numeric order (1 = `01 00 00 00` sorts after 256 = `00 01 00 00`, and negatives after
    positives). Written by Java's `BitmapGlobalIndexWriter` (`BitmapGlobalIndexFormat.write`:
    null and non-null bitmaps first, then the value bitmaps interleaved with the dictionary
    blocks, then the index block), as the first Java version (apache/paimon#8276) did, and
    byte for byte the same by pypaimon 2.1.0's `BitmapIndexWriter`; pypaimon 2.1.0 writes and
    reads version 1 only.
  * **version 2** (`LOGICAL_KEY_ORDER_VERSION`): keys sorted by the column's typed comparator
    (numbers numerically, FLOAT/DOUBLE as Java's `Float.compare`: -0.0 before 0.0, NaN last;
    strings by unsigned UTF-8 bytes; timestamps by millis, then nanos). Written by Java's
    `SortedBitmapGlobalIndexWriter` (`BitmapGlobalIndexFormat.StreamingWriter`, for sorted
    input such as primary-key sorted indexes): value bitmaps interleaved with the dictionary
    blocks, then the null and non-null bitmaps, then the index block.

  This library reads both by the footer's version and writes both (version 1 by default).
  Where the implementations disagree:

  * Java's master as merged (apache/paimon#8613, 2026-07-14; still so in the snapshot of
    2026-08-22) has only the streaming writer, which refuses unsorted input and writes the
    version-2 layout and typed order with version **1** in the footer, and a reader that
    accepts version 1 only and looks keys up in typed order in every file. Its files cannot be
    told from serialized-order files by their bytes (a reader can only check the order of the
    keys it reads), and it misses keys in pypaimon's files as pypaimon-rust does (below).
  * pypaimon-rust 0.4.0 (its `sys.create_global_index` procedure) writes the version-1 layout
    and footer over keys sorted in *typed* order, like Java's master: its
    files equal pypaimon's only where both orders agree (strings, small non-negative numbers).
    It reads version 1 only ("Unsupported bitmap global index file version: 2") and looks keys
    up in typed order: in pypaimon's version-1 file of DATE keys 19960..19979 it finds none of
    the 5 rows of 19961, which sorts after 19968 (`00 4e 00 00`) by bytes; Java's and our
    version-1 lookups (byte order) miss keys in its files in the same way.
    apache/paimon-rust#601 aligned it with Java after 0.4.0.
  * pypaimon 2.1.0 writes its bitmaps without Roaring's `runOptimize`, Java with it; the two
    writers' bitmap bytes therefore differ where a run container is smaller, and so do the
    offsets after them. Both read either.
  * pypaimon 2.1.0 packs a NaN key's own bits (`struct.pack`: -NaN as `00 00 c0 ff`), Java
    canonicalizes every NaN (`floatToIntBits`): a lookup of NaN in Java misses pypaimon's
    negative NaNs.
  * paimon-cpp disabled its bitmap global index when Java changed the format
    (alibaba/paimon-cpp#436); a version-1 implementation is under review (apache/paimon-cpp#352).
  * Java may compress dictionary and index blocks (`bitmap-index.compression`, default
    `none`: a block is kept compressed only when that saves at least an eighth); pypaimon
    writes `none` only. A compressed payload (varint uncompressed length, then zstd/lz4/lzo
    bytes) is not described by this spec: read as entries, it fails inside the payload or,
    if its bytes happen to parse, at `compression_type`.
doc-ref:
  - https://github.com/apache/paimon/blob/1e2a322e96654758639a30e59537ea6aa104824e/paimon-common/src/main/java/org/apache/paimon/globalindex/bitmap/BitmapGlobalIndexFormat.java
  - https://github.com/apache/paimon/pull/8613
  - https://github.com/apache/paimon/blob/1e2a322e96654758639a30e59537ea6aa104824e/paimon-common/src/main/java/org/apache/paimon/globalindex/bitmap/BitmapIndexReader.java
  - https://github.com/apache/paimon/blob/1e2a322e96654758639a30e59537ea6aa104824e/paimon-common/src/main/java/org/apache/paimon/globalindex/bitmap/BitmapGlobalIndexWriter.java
  - https://github.com/apache/paimon/blob/1e2a322e96654758639a30e59537ea6aa104824e/paimon-common/src/main/java/org/apache/paimon/globalindex/bitmap/SortedBitmapGlobalIndexWriter.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/globalindex/KeySerializer.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/sst/BlockTrailer.java
instances:
  footer:
    pos: _io.size - 48
    type: footer
    doc: The last 48 bytes of the file, where every read starts.
  null_rows:
    pos: footer.ofs_null_rows
    size: footer.len_null_rows
    type: deletion_vectors::bitmap64
    doc: The rows whose value is NULL (`IS NULL`).
    -orig-id: nullRows
  non_null_rows:
    pos: footer.ofs_non_null_rows
    size: footer.len_non_null_rows
    type: deletion_vectors::bitmap64
    doc: The rows whose value is not NULL (`IS NOT NULL`, and the base of `!=` / `NOT IN`).
    -orig-id: nonNullRows
  index_block:
    pos: footer.ofs_index_block
    type: index_block(footer.len_index_block)
    doc: The list of dictionary blocks, each with its first key, then the block's trailer.
    -orig-id: dictionaryBlocks
enums:
  format_version:
    1:
      id: serialized_key_order
      doc: |
        Keys sorted by their serialized bytes, unsigned (`SERIALIZED_KEY_ORDER_VERSION`);
        written by Java's `BitmapGlobalIndexWriter` and pypaimon 2.1.0.
    2:
      id: logical_key_order
      doc: |
        Keys sorted by the column's typed comparator (`LOGICAL_KEY_ORDER_VERSION`); written by
        Java's `SortedBitmapGlobalIndexWriter`.
  block_compression:
    0:
      id: none
      doc: The payload is stored as is; the only kind this spec describes.
    1:
      id: zstd
      doc: Zstandard (`BlockCompressionType.ZSTD`); payload not described here.
    2:
      id: lz4
      doc: LZ4 (`BlockCompressionType.LZ4`); payload not described here.
    3:
      id: lzo
      doc: LZO (`BlockCompressionType.LZO`); payload not described here.
types:
  footer:
    doc: Where the three top-level blocks are, the number of distinct keys, version and magic.
    -orig-id: Footer
    seq:
      - id: ofs_null_rows
        type: s8
        -js-exact:
          because: an offset inside the file, far below 2^53 bytes
        valid:
          min: 0
        doc: File offset of the null-rows bitmap.
        -orig-id: nullRowsBlock.offset
      - id: len_null_rows
        type: s4
        valid:
          min: 0
        doc: Byte length of the null-rows bitmap.
        -orig-id: nullRowsBlock.length
      - id: ofs_non_null_rows
        type: s8
        -js-exact:
          because: an offset inside the file, far below 2^53 bytes
        valid:
          min: 0
        doc: File offset of the non-null-rows bitmap.
        -orig-id: nonNullRowsBlock.offset
      - id: len_non_null_rows
        type: s4
        valid:
          min: 0
        doc: Byte length of the non-null-rows bitmap.
        -orig-id: nonNullRowsBlock.length
      - id: ofs_index_block
        type: s8
        -js-exact:
          because: an offset inside the file, far below 2^53 bytes
        valid:
          min: 0
        doc: File offset of the index block.
        -orig-id: indexBlock.offset
      - id: len_index_block
        type: s4
        valid:
          min: 0
        doc: Byte length of the index block's payload (its 5-byte trailer follows it).
        -orig-id: indexBlock.length
      - id: num_values
        type: s4
        valid:
          min: 0
        doc: Number of distinct non-null keys, i.e. of dictionary entries in all blocks.
        -orig-id: valueCount
      - id: version
        type: s4
        enum: format_version
        valid:
          any-of:
            - format_version::serialized_key_order
            - format_version::logical_key_order
        doc: How the keys are ordered (see the enum); Java reads both.
        -orig-id: version
      - id: magic
        contents: BGIX
        doc: 0x42474958, "BGIX".
        -orig-id: MAGIC
  index_block:
    doc: |
      The index block, a compressible block listing the dictionary blocks by first key.
      Its payload is read as a substream of its `len_payload` bytes (so a damaged count or key
      length inside cannot read past it); the trailer follows right after those bytes.
    -orig-id: readIndexBlock
    params:
      - id: len_payload
        type: s4
        doc: Payload length (the footer's `len_index_block`).
    seq:
      - id: payload
        size: len_payload
        type: index_payload
        doc: The block's payload, confined to its `len_payload` bytes.
        -orig-id: blockBytes
      - id: compression_type
        type: u1
        enum: block_compression
        valid: block_compression::none
        doc: The trailer's first byte, the payload's compression; valid only for `none`.
        -orig-id: BlockTrailer.compressionType
      - id: checksum
        type: u4le
        -checksum:
          algorithm: crc32
          over: [payload, compression_type]
        doc: The trailer's CRC-32 of the payload followed by the compression-type byte.
        -orig-id: BlockTrailer.crc32c
  index_payload:
    doc: |
      The index block's payload: the number of dictionary blocks, then one entry per block.
      The entries must fill the payload exactly: Kaitai parsers do not check that,
      paimon_schema's reader does (a `FormatError` at the first byte left over, at `payload`).
    seq:
      - id: num_dictionary_blocks
        type: paimon_common::var_len_int
        doc: Number of dictionary blocks.
        -orig-id: blockCount
      - id: dictionary_blocks
        type: dictionary_block_ref
        repeat: expr
        repeat-expr: num_dictionary_blocks.value
        doc: One entry per dictionary block, in key order.
  dictionary_block_ref:
    doc: Where one dictionary block is, and the first (smallest) key it holds.
    -orig-id: DictionaryBlockMeta
    -webide-representation: 'block at {ofs_block.value:dec}, {len_block.value:dec} bytes'
    seq:
      - id: len_first_key
        type: paimon_common::var_len_int
        doc: Length of `first_key`.
      - id: first_key
        size: len_first_key.value
        doc: The serialized key of the block's first entry.
        -orig-id: firstKey
      - id: ofs_block
        type: paimon_common::var_len_long
        doc: File offset of the dictionary block.
        -orig-id: offset
      - id: len_block
        type: paimon_common::var_len_int
        doc: Payload length of the dictionary block (its trailer follows).
        -orig-id: length
    instances:
      block:
        io: _root._io
        pos: ofs_block.value
        type: dictionary_block(len_block.value)
        doc: The dictionary block itself, read from the file (not from the index block).
  dictionary_block:
    doc: |
      A dictionary block, a compressible block of consecutive distinct keys and their bitmaps.
      Its payload is read as a substream of its `len_payload` bytes (so a damaged count or key
      length inside cannot read past it); the trailer follows right after those bytes.
    -orig-id: DictionaryBlock
    params:
      - id: len_payload
        type: s4
        doc: Payload length of this block.
    seq:
      - id: payload
        size: len_payload
        type: dictionary_payload
        doc: The block's payload, confined to its `len_payload` bytes.
        -orig-id: blockBytes
      - id: compression_type
        type: u1
        enum: block_compression
        valid: block_compression::none
        doc: The trailer's first byte, the payload's compression; valid only for `none`.
        -orig-id: BlockTrailer.compressionType
      - id: checksum
        type: u4le
        -checksum:
          algorithm: crc32
          over: [payload, compression_type]
        doc: The trailer's CRC-32 of the payload followed by the compression-type byte.
        -orig-id: BlockTrailer.crc32c
  dictionary_payload:
    doc: |
      A dictionary block's payload: the number of keys, then each key and its bitmap's place.
      The entries must fill the payload exactly: Kaitai parsers do not check that,
      paimon_schema's reader does (a `FormatError` at the first byte left over, at `payload`).
    seq:
      - id: num_entries
        type: paimon_common::var_len_int
        doc: Number of keys in the block.
        -orig-id: entryCount
      - id: entries
        type: dictionary_entry
        repeat: expr
        repeat-expr: num_entries.value
        doc: The keys in key order, each with its bitmap.
  dictionary_entry:
    doc: One distinct key and where its bitmap of row ids is.
    -orig-id: DictionaryEntry
    -webide-representation: '{len_key.value:dec}-byte key, bitmap at {ofs_bitmap.value:dec}'
    seq:
      - id: len_key
        type: paimon_common::var_len_int
        doc: Length of `key`.
      - id: key
        size: len_key.value
        doc: The serialized key (`KeySerializer` bytes of the column's type).
        -orig-id: key
      - id: ofs_bitmap
        type: paimon_common::var_len_long
        doc: File offset of the key's bitmap.
        -orig-id: bitmapBlock.offset
      - id: len_bitmap
        type: paimon_common::var_len_int
        doc: Byte length of the key's bitmap.
        -orig-id: bitmapBlock.length
    instances:
      bitmap:
        io: _root._io
        pos: ofs_bitmap.value
        size: len_bitmap.value
        type: deletion_vectors::bitmap64
        doc: The rows holding this key, read from the file (not from the dictionary block).
