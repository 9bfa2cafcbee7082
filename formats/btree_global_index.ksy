meta:
  id: btree_global_index
  title: Apache Paimon btree global index file (SST)
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: le
  imports:
    - deletion_vectors
    - paimon_common
doc: |
  A btree global index file indexes one column of a data-evolution table (or, for a
  primary-key table's `pk-btree.index.columns`, of the files it was built from) by its values:
  for every distinct non-null key it lists the row ids holding it, and it keeps the rows whose
  key is null in one bitmap. Files are named `btree-global-index-<uuid>.index` and recorded
  in the index manifest with the row range they cover; row ids are relative to its start.

  The file is an SST (sorted string table), written front to back and read back to front:

  * **data blocks**, back to back: each holds entries (`var_len_int` key length, key bytes,
    `var_len_int` value length, value) in ascending key order, one entry per distinct key;
    the value is the key's row ids (a count, then each id as `var_len_long`, in the order
    written). A block is closed once `BlockWriter.memory()` (its bytes, plus 4 per entry
    when unaligned, plus 5) exceeds the block size (`btree-index.block-size`, default 64 KiB),
    so the entry that crosses it is the last;
  * the **null bitmap**, if any row was null: a 64-bit Roaring bitmap of their row ids
    (`RoaringNavigableMap64`: Roaring's portable 64-bit format, only non-empty buckets), then a
    CRC32 of it;
  * the **bloom filter**, if the writer built one, over the keys' Murmur3 hashes;
  * the **index block**: one entry per data block, keyed by the block's last key, whose value
    is the block's handle (`var_len_long` offset, `var_len_int` size);
  * the **footer**: 52 bytes at the end of the file locating the three parts before it.

  Every block (data and index) ends with its own small table: for blocks whose entries all
  have one size (*aligned*), that size; otherwise the start of every entry, then their count;
  then a byte saying which. After each block comes a 5-byte trailer: the compression type and a
  CRC32 over the stored block bytes followed by the compression byte. Java names the trailer
  field and helper `crc32c`, but computes it with `java.util.zip.CRC32` (the zlib polynomial),
  as pypaimon does. A compressed block (`btree-index.compression` zstd, lz4 or lzo; default
  none) stores the uncompressed length as a `var_len_int`, then the codec's output (lz4 and
  lzo prefix it with two little-endian int32: compressed and uncompressed length); Java keeps
  a block uncompressed unless compression saves at least 1/8. The handles name a block's
  stored size, without the trailer.

  Keys are Paimon's `KeySerializer` bytes, which depend on the column type and are not
  recorded in the file: TINYINT, SMALLINT, INT, DATE (days), TIME (millis of day) and BIGINT
  as 1/2/4/4/4/8 little-endian two's-complement bytes; BOOLEAN one byte 0/1; FLOAT and DOUBLE
  their IEEE bits little-endian (`floatToIntBits`: one NaN); DECIMAL(p <= 18) the unscaled
  value as 8 little-endian bytes, wider decimals `BigInteger.toByteArray()` (big-endian,
  minimal); TIMESTAMP/TIMESTAMP_LTZ millis as 8 little-endian bytes, then for precision > 3 the
  nanos of the millisecond as a `var_len_int`; CHAR/VARCHAR/STRING their UTF-8 bytes. Entries
  are in the order of the type's comparator (numbers by value, strings by unsigned bytes), not
  of the key bytes.

  Where the implementations differ (Java's source decides):
  * Java's `BTreeIndexWriter` never builds a bloom filter (the handle is all zeros); pypaimon
    2.1.0 writes one when asked (`bloom_filter_enabled`, fpp 0.05, one hash per distinct key),
    which Java's `SstFileReader` can read.
  * Java serializes the null bitmap after `runOptimize()`; pypaimon 2.1.0 and pypaimon-rust
    0.4.0 serialize it as built, so a run of null rows is an array or bitmap container in their
    files and a run container in Java's.
  * Java's FLOAT/DOUBLE comparator (`Float.compareTo`) orders -0.0 before 0.0, two keys, as
    pypaimon-rust does; pypaimon's compares them equal and merges their row ids under
    whichever came last.
  * Java writes every NaN as `floatToIntBits` does (one NaN, 0x7fc00000 / 0x7ff8000000000000);
    pypaimon and pypaimon-rust keep the NaN's own bits (a negative NaN stays negative).
  * Java writes uncompressed blocks unless `btree-index.compression` is set; pypaimon reads
    zstd, lz4 and lzo blocks but writes none. paimon-schema writes uncompressed blocks and
    reads uncompressed and zstd ones (lz4 and lzo are refused by name).
  * The order of a key's row ids is the builder's: pypaimon's and this library's writers
    list them ascending; Java's primary-key btree builder (the sample table's files) lists
    them in its sort's order. Readers must not rely on it.
doc-ref:
  - https://paimon.apache.org/docs/master/multimodal-table/global-index/btree/
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/globalindex/btree/BTreeIndexWriter.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/globalindex/btree/BTreeFileFooter.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/sst/SstFileWriter.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/sst/BlockWriter.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/globalindex/KeySerializer.java
seq:
  - id: file
    size-eos: true
    doc: |
      The whole file (at least the 52 bytes of the footer). Its structure is reached from the footer in its last 52 bytes, as
      Java's reader does: the instances below read the footer, the index block, the data
      blocks it names, the null bitmap and the bloom filter at their offsets.
instances:
  footer:
    pos: file.length - 52
    type: footer
    doc: The 52-byte footer (`BTreeFileFooter`) that locates everything else.
  index_block:
    pos: footer.ofs_index_block
    type: block(footer.ofs_index_block, footer.len_index_block, true)
    doc: The index block and its trailer; one entry per data block, keyed by its last key.
  null_bitmap:
    pos: footer.ofs_null_bitmap
    size: footer.len_null_bitmap + 4
    type: null_bitmap(footer.len_null_bitmap)
    if: footer.has_null_bitmap
    doc: The rows whose key is null, with their CRC32; absent when no key was null.
  bloom_filter:
    pos: footer.ofs_bloom_filter
    size: footer.len_bloom_filter
    if: footer.has_bloom_filter
    doc: |
      The bloom filter's bit set (Paimon's `BloomFilter`: bit `i` is bit `i % 8` of byte
      `i / 8`); its hash-function count is derived, not stored: `max(1, round(len * 8 /
      num_expected_entries * ln 2))`. A key's Murmur3-32 hash (seed 42, tail bytes mixed one
      at a time, `MurmurHashUtils.hashBytes`) `h` sets bits `(h + i * (h >>> 16))` (negated
      bitwise when negative) modulo the bit count, for i = 1 .. count.
  data_blocks:
    pos: 0
    type: data_block_ref(_index)
    repeat: expr
    repeat-expr: index_block.contents.num_entries
    if: index_block.compression == block_compression::none
    doc: |
      The data blocks, in the index block's order (ascending keys), each read at the handle
      its index entry holds. A compressed index block leaves them to a reader that
      decompresses it.
enums:
  block_compression:
    0:
      id: none
      doc: Stored as written.
    1:
      id: zstd
      doc: Zstandard frame (`ZstdBlockCompressor`), after the var_len_int uncompressed length.
    2:
      id: lz4
      doc: LZ4 block (`Lz4BlockCompressor`) with an 8-byte length header.
    3:
      id: lzo
      doc: LZO1X (aircompressor's `LzoCompressor`) with an 8-byte length header.
  block_aligned_type:
    0:
      id: aligned
      doc: Every entry has the same size; the block ends with that size.
    1:
      id: unaligned
      doc: Entries differ in size; the block ends with each entry's start, then their count.
  footer_version:
    1:
      id: v1
      doc: The only version (`BTreeFileFooter.CURRENT_VERSION`).
types:
  footer:
    doc: |
      Where the bloom filter, the index block and the null bitmap are. An absent bloom filter
      is all zeros (offset, size and expected entries), an absent null bitmap zero offset and
      size.
    -orig-id: BTreeFileFooter
    seq:
      - id: ofs_bloom_filter
        type: u8
        -js-exact:
          because: an offset inside the file, far below 2^53 bytes
        -orig-id: bloomFilterHandle.offset
        doc: Offset of the bloom filter's bit set (`BloomFilterHandle.offset`).
      - id: len_bloom_filter
        type: u4
        -orig-id: bloomFilterHandle.size
        doc: Its size in bytes.
      - id: num_expected_entries
        type: u8
        -js-exact:
          because: a count of keys, far below 2^53
        -orig-id: bloomFilterHandle.expectedEntries
        doc: The number of keys the filter was sized for; the hash count derives from it.
      - id: ofs_index_block
        type: u8
        -js-exact:
          because: an offset inside the file, far below 2^53 bytes
        -orig-id: indexBlockHandle.offset
        doc: Offset of the index block (`BlockHandle.offset`).
      - id: len_index_block
        type: u4
        -orig-id: indexBlockHandle.size
        doc: Its stored size, without the 5-byte trailer that follows it.
      - id: ofs_null_bitmap
        type: u8
        -js-exact:
          because: an offset inside the file, far below 2^53 bytes
        -orig-id: nullBitmapHandle.offset
        doc: Offset of the null bitmap.
      - id: len_null_bitmap
        type: u4
        -orig-id: nullBitmapHandle.size
        doc: Its size, without the 4-byte CRC32 that follows it.
      - id: version
        type: u4
        enum: footer_version
        -orig-id: version
        valid:
          any-of:
            - footer_version::v1
        doc: Footer version; Java and pypaimon write and read 1.
      - id: magic
        type: u4
        -orig-id: MAGIC_NUMBER
        valid: 0x50425449
        doc: 0x50425449 ("PBTI"), stored little-endian as the bytes `ITBP`.
    instances:
      has_bloom_filter:
        value: ofs_bloom_filter != 0 or len_bloom_filter != 0 or num_expected_entries != 0
        doc: Whether a bloom filter was written.
      has_null_bitmap:
        value: ofs_null_bitmap != 0 or len_null_bitmap != 0
        doc: Whether any row's key was null.
  null_bitmap:
    doc: The row ids of null keys (`RoaringNavigableMap64.serialize`) and their CRC32.
    -orig-id: nullBitmap
    params:
      - id: len_bitmap
        type: u4
        doc: The size the footer records (without the CRC32).
    seq:
      - id: bitmap
        size: len_bitmap
        type: deletion_vectors::bitmap64
        doc: |
          The row ids of the null keys: Roaring's portable 64-bit format, the framing of
          deletion_vectors.ksy's 64-bit bins (a bucket count, then per bucket its high 32 bits
          and a 32-bit RoaringBitmap of the low halves). Java and pypaimon write only non-empty
          buckets (a 64-bit deletion vector writes the empty gap buckets too); bytes after the
          last bucket (its `trailing`) are refused by readers, as for deletion vectors.
      - id: checksum
        type: u4
        -checksum:
          algorithm: crc32
          over: [bitmap]
        doc: CRC32 (zlib polynomial) of the bitmap bytes.
  block:
    doc: |
      One block as stored: its bytes, then the trailer (`BlockTrailer`). Uncompressed, the
      bytes are entries followed by the block's own table (`BlockWriter.finish`).
    -orig-id: BlockReader
    params:
      - id: ofs_block
        type: u8
        doc: Where the block starts in the file (its contents are read there).
      - id: len_stored
        type: u4
        doc: The block's stored size from its handle, without the trailer.
      - id: is_index
        type: bool
        doc: Whether this is the index block (entries hold block handles, not row ids).
    seq:
      - id: stored
        size: len_stored
        doc: The block's bytes as written (compressed if `compression` says so).
      - id: compression
        type: u1
        enum: block_compression
        -orig-id: compressionType
        valid:
          any-of:
            - block_compression::none
            - block_compression::zstd
            - block_compression::lz4
            - block_compression::lzo
        doc: How `stored` is compressed (`BlockCompressionType.persistentId`).
      - id: checksum
        type: u4
        -checksum:
          algorithm: crc32
          over: [stored, compression]
        -orig-id: crc32c
        doc: |
          CRC32 (zlib polynomial; Java's `crc32c` helper uses `java.util.zip.CRC32`) of the
          stored bytes followed by the compression byte.
    instances:
      contents:
        pos: ofs_block
        size: stored.size
        type: block_contents(is_index, stored.size)
        if: compression == block_compression::none
        doc: |
          The uncompressed block's entries and table, read as a substream of its `len_stored`
          bytes: a damaged count or length inside a block costs at most the block.
      compressed:
        pos: ofs_block
        size: stored.size
        type: compressed_block
        if: compression != block_compression::none
        doc: A compressed block's uncompressed length and payload.
  block_contents:
    doc: |
      An uncompressed block (`BlockWriter.finish`): its entries, then its table, read from
      its end: each entry's start when entries differ in size, then their count or common
      size, then the aligned type (what Java's `BlockReader` reads). Positions count from the
      block's start.
    params:
      - id: is_index
        type: bool
        doc: Whether this is the index block (entries hold block handles, not row ids).
      - id: len_block
        type: u4
        doc: The block's size (its stored size, the substream's).
    instances:
      aligned_type:
        pos: len_block - 1
        type: u1
        enum: block_aligned_type
        valid:
          any-of:
            - block_aligned_type::aligned
            - block_aligned_type::unaligned
        doc: Whether all entries have one size (the block's last byte).
      entry_size_or_count:
        pos: len_block - 5
        type: u4
        doc: |
          The entries' common size when aligned (never 0), else their count (0 only in the
          index block of a file whose keys are all null).
      num_entries:
        value: |
          aligned_type == block_aligned_type::aligned ?
            (entry_size_or_count == 0 ? 0 : (len_block - 5) / entry_size_or_count)
            : entry_size_or_count
        doc: How many entries the block holds.
      num_entry_positions:
        value: 'aligned_type == block_aligned_type::unaligned ? entry_size_or_count : 0'
        doc: How many entry starts the block's table lists (unaligned blocks only).
      len_entries:
        value: |
          aligned_type == block_aligned_type::aligned ?
            len_block - 5 : len_block - 5 - 4 * entry_size_or_count
        doc: The bytes the entries take, before the block's table.
      entries:
        pos: 0
        type: 'entry(is_index)'
        repeat: expr
        repeat-expr: num_entries
        doc: The entries, in ascending key order.
      entry_positions:
        pos: len_entries
        type: u4
        repeat: expr
        repeat-expr: num_entry_positions
        if: aligned_type == block_aligned_type::unaligned
        doc: Where each entry starts in the block (unaligned blocks only), for binary search.
  compressed_block:
    doc: A compressed block (`SstFileWriter.writeBlock`).
    seq:
      - id: len_uncompressed
        type: paimon_common::var_len_int
        doc: The block's size before compression.
      - id: payload
        size-eos: true
        doc: |
          The compressor's output: a zstd frame, or for lz4 and lzo two little-endian int32
          (compressed, uncompressed length) and the raw codec block.
  entry:
    doc: One key and its value (`BlockWriter.add`).
    -orig-id: BlockEntry
    -webide-representation: 'key {key}'
    params:
      - id: is_index
        type: bool
        doc: Whether the value is a block handle (index block) or row ids (data block).
    seq:
      - id: len_key
        type: paimon_common::var_len_int
        doc: The key's size in bytes.
      - id: key
        size: len_key.value
        doc: The key's `KeySerializer` bytes (see the top-level doc).
      - id: len_value
        type: paimon_common::var_len_int
        doc: The value's size in bytes.
      - id: value
        size: len_value.value
        type:
          switch-on: is_index
          cases:
            true: block_handle
            false: row_ids
        doc: A data block's handle (index block) or the key's row ids (data block).
  block_handle:
    doc: Where a data block is (`BlockHandle`); the trailer follows it.
    -orig-id: BlockHandle
    seq:
      - id: ofs_block
        type: paimon_common::var_len_long
        -orig-id: offset
        doc: The block's offset in the file.
      - id: len_block
        type: paimon_common::var_len_int
        -orig-id: size
        doc: Its stored size, without the trailer.
      - id: trailing
        type: u1
        repeat: eos
        valid:
          max: -1
        doc: |
          Bytes after the size, inside the entry's value: none from any writer, and refused
          (Java's reader stops after the size). No byte passes this check (`max: -1`): the
          spec's "nothing more" in a form every Kaitai target compiles (`valid: expr` is not).
  row_ids:
    doc: The rows holding one key, relative to the index file's row range.
    seq:
      - id: num_row_ids
        type: paimon_common::var_len_int
        doc: How many row ids follow; at least one (a count of 0 fails at `no_row_ids`).
      - id: no_row_ids
        type: u1
        repeat: expr
        repeat-expr: 'num_row_ids.value == 0 ? 1 : 0'
        valid:
          max: -1
        doc: |
          Read only after a count of 0, which no writer produces (a key is written with the rows
          holding it) and readers refuse: a byte here fails this check (`max: -1`, no byte
          passes) and the end of the value fails reading it. The spec's "at least one" in a form
          every Kaitai target compiles (`valid: expr` is not).
      - id: row_ids
        type: paimon_common::var_len_long
        repeat: expr
        repeat-expr: num_row_ids.value
        doc: The row ids, in the order they were written (ascending for Paimon's builders).
      - id: trailing
        type: u1
        repeat: eos
        valid:
          max: -1
        doc: |
          Bytes after the last row id, inside the entry's value: none from any writer, and
          refused (Java's reader stops after the count's ids). No byte passes this check
          (`max: -1`), as in `block_handle`.
  data_block_ref:
    doc: One data block, found through its index entry.
    params:
      - id: i
        type: u4
        doc: The index entry's position in the index block.
    instances:
      block:
        pos: _root.index_block.contents.entries[i].value.as<block_handle>.ofs_block.value
        type: |
          block(_root.index_block.contents.entries[i].value.as<block_handle>.ofs_block.value,
                _root.index_block.contents.entries[i].value.as<block_handle>.len_block.value, false)
        doc: The data block and its trailer, where the handle in index entry `i` says.
