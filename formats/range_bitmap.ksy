meta:
  id: range_bitmap
  title: Apache Paimon range-bitmap file index
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: be
  imports:
    - paimon_common
doc: |
  The `range-bitmap` file index of one column of one data file (`RangeBitmap`, since 1.3): a
  sorted dictionary that gives every distinct non-null key a *code*, and a bit-sliced index
  (BSI) that gives every row its code. Equality and range predicates become code comparisons
  on the BSI; nulls are the rows missing from its existence bitmap.

  The writer numbers rows from 0, nulls included (`rid` counts them all), collects the keys in a
  `TreeMap` ordered by the type's comparator, and assigns codes 0..n-1 in ascending key order,
  `n` being the number of distinct non-null keys. The whole blob is built with big-endian
  `ByteBuffer`s; keys are encoded as `paimon_common::key` (float keys keep their raw NaN bits:
  `putFloat`, not `floatToIntBits`), so the reader passes `key_kind`:

  * INT, DATE, TIME: int32; BIGINT, TIMESTAMP (p <= 3 millis, p <= 6 micros), DECIMAL (p <= 18,
    unscaled): int64; FLOAT: float32; DOUBLE: float64; BOOLEAN, TINYINT, SMALLINT: boolean,
    int8, int16 (default chunk size 0 bytes: one key per chunk); CHAR/VARCHAR: string.
  * Strings give *variable-length* chunks, every other kind *fixed-length* chunks
    (`is_variable_length`).

  Layout, every part lazily reachable as Java reads it:

  * a header (`len_header` then `header`): version, rid, n, min and max keys (only if n > 0), and
    the dictionary length;
  * the chunked dictionary, at `ofs_dictionary`: its own 13-byte header, one offset per chunk,
    the chunk headers back to back, then the key region. A chunk header holds the chunk's first
    key and code, and where its remaining `num_keys` keys (codes `code + 1 ..
    code + num_keys`) lie in the key region. Keys are appended in code order; a chunk takes
    keys while they fit in `chunk-size` bytes (its first key, in the header, costs nothing).
    Lookup: binary search over the chunk headers' first keys, then inside the floor chunk;
  * the BSI, at `ofs_bsi`: its header with the slice count as ONE byte (the docs say 4), the
    existence-bitmap length, and an (offset, length) pair per slice, offsets relative to the
    END of the existence bitmap; then the existence bitmap and the slices, each a portable
    RoaringBitmap (roaring_bitmap.ksy). Slice `i` holds the rows whose code has bit `i` set;
    the slice count is `max(bitLength(n - 1), 1)`.

  Quirk: with n = 0 (no rows, or all null) `n - 1` is widened to the long -1, whose bit length
  is 64, so Java writes 64 empty slices: such a blob is 1080 bytes.

  Example, INT values [10, 30, null, 20, 10, 40], default chunk size:

      00000015 01 00000006 00000004 0000000a 00000028 0000003a
      0000000d 01 00000001 00000004 00000019  00000000
      01 0000000a 00000000 00000000 00000003 0000000c 00000004  00000014 0000001e 00000028
      0000001a 01 02 0000001a 00000010 00000000 00000014 00000014 00000014
      ebm {0,1,3,4,5} (26 bytes), slice 0 {3,5}, slice 1 {1,5}

  Java's reader rejects only versions > 1 (read as signed bytes) and treats n <= 0 as "no
  min/max, every comparison empty".
doc-ref:
  - https://paimon.apache.org/docs/master/concepts/spec/fileindex/
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/rangebitmap/RangeBitmap.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/rangebitmap/dictionary/chunked/ChunkedDictionary.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/rangebitmap/BitSliceIndexBitmap.java
params:
  - id: key_kind
    type: u1
    enum: paimon_common::key_kind
    doc: How keys are encoded; chosen by the reader from the indexed column's data type.
seq:
  - id: len_header
    -orig-id: headerLength
    type: s4
    valid:
      min: 13
    doc: Byte length of `header` (1 + 4 + 4 + min and max key sizes + 4).
  - id: header
    size: len_header
    type: header
    doc: Version, row count, number of keys, key range and dictionary length.
  - id: dictionary_mark
    type: paimon_common::position_mark(_io.pos)
    doc: Marks the dictionary start, right after the header.
instances:
  is_variable_length:
    value: key_kind == paimon_common::key_kind::string
    doc: Whether dictionary chunks are variable-length (strings) rather than fixed-length.
  len_fixed_key:
    value: |
      key_kind == paimon_common::key_kind::boolean or key_kind == paimon_common::key_kind::int8 ? 1 :
      key_kind == paimon_common::key_kind::int16 ? 2 :
      key_kind == paimon_common::key_kind::int32 or key_kind == paimon_common::key_kind::float32 ? 4 :
      key_kind == paimon_common::key_kind::string ? 0 : 8
    doc: Byte length of one key of a fixed-length kind, 0 for strings.
  ofs_dictionary:
    value: dictionary_mark.ofs
    doc: Stream position of the chunked dictionary.
  dictionary:
    pos: ofs_dictionary
    size: header.len_dictionary
    type: chunked_dictionary
    doc: |
      The key <-> code dictionary, confined to its `len_dictionary` bytes (so a damaged count
      inside cannot read past it); parsing it reads only its header and chunk offsets.
      Positions inside it count from its start.
  ofs_bsi:
    value: ofs_dictionary + header.len_dictionary
    doc: Stream position of the bit-sliced index, right after the dictionary.
  bsi:
    pos: ofs_bsi
    type: bit_sliced_index
    doc: The row -> code bit-sliced index; parsing it reads only its header.
enums:
  version:
    1:
      id: v1
      -orig-id: VERSION_1
      doc: 'VERSION_1 (CURRENT_VERSION of RangeBitmap, ChunkedDictionary, its chunks and BitSliceIndexBitmap), the only version.'
types:
  header:
    doc: The range-bitmap header proper, as Java reads it from one `len_header`-byte buffer.
    seq:
      - id: version
        type: u1
        enum: version
        valid: version::v1
        doc: Layout version; 1 is the only one.
      - id: num_rows
        -orig-id: rid
        type: s4
        valid:
          min: 0
        doc: Number of rows written, nulls included (Java's rid).
      - id: num_keys
        -orig-id: cardinality
        type: s4
        valid:
          min: 0
        doc: Number of distinct non-null keys `n` (Java's cardinality), hence codes 0..n-1.
      - id: min_key
        -orig-id: min
        type: paimon_common::key(_root.key_kind)
        if: num_keys > 0
        doc: The smallest key (code 0); absent when there are no keys.
      - id: max_key
        -orig-id: max
        type: paimon_common::key(_root.key_kind)
        if: num_keys > 0
        doc: The largest key (code n - 1); absent when there are no keys.
      - id: len_dictionary
        -orig-id: dictionaryLength
        type: s4
        valid:
          min: 17
        doc: Byte length of the chunked dictionary; the BSI follows it.
  chunked_dictionary:
    -orig-id: ChunkedDictionary
    doc: |
      `ChunkedDictionary`: a 13-byte header, the offsets of the chunk headers, the chunk
      headers, and the key region, which runs to the end of the dictionary. Only the header and
      the offsets are parsed in sequence; chunk headers and keys are positioned instances.
    seq:
      - id: len_header
        -orig-id: headerLength
        type: s4
        valid: 13
        doc: Byte length of the dictionary header that follows (version to `len_chunks`).
      - id: version
        type: u1
        enum: version
        valid: version::v1
        doc: Dictionary version; 1 is the only one.
      - id: num_chunks
        -orig-id: size
        type: s4
        valid:
          min: 0
        doc: Number of chunks (not keys; the docs' "size"); 0 when there are no keys.
      - id: len_offsets
        -orig-id: offsetsLength
        type: s4
        valid: 4 * num_chunks
        doc: Byte length of the chunk offsets, 4 per chunk.
      - id: len_chunks
        -orig-id: chunksLength
        type: s4
        valid:
          min: 0
        doc: Total byte length of all chunk headers; the key region follows them.
      - id: chunks
        type: chunk(_index)
        repeat: expr
        repeat-expr: num_chunks
        doc: One offset per chunk, in code order; each gives lazy access to the chunk.
      - id: chunk_headers_mark
        type: paimon_common::position_mark(_io.pos)
        doc: Marks the start of the chunk headers, right after the offsets.
    instances:
      ofs_chunk_headers:
        value: chunk_headers_mark.ofs
        doc: Position of the first chunk header in the dictionary, the base of the chunk offsets.
      ofs_key_region:
        value: ofs_chunk_headers + len_chunks
        doc: Position of the key region in the dictionary, the base of each chunk's `ofs_keys`.
      len_key_region:
        value: _io.size - ofs_key_region
        doc: Byte length of the key region (to the dictionary's end), the sum of every chunk's key blob.
  chunk:
    doc: |
      One chunk of the dictionary: its offset, and as instances its header (sliced from this
      offset to the next one, as Java does) and its key blob in the key region.
    -webide-representation: 'chunk {index:dec} at {ofs_chunk:dec}'
    params:
      - id: index
        type: s4
        doc: Position of the chunk in the dictionary, for finding where its header ends.
    seq:
      - id: ofs_chunk
        type: s4
        valid:
          min: 0
        doc: Offset of the chunk header from the start of the chunk headers.
    instances:
      len_header:
        value: '(index + 1 < _parent.num_chunks ? _parent.chunks[index + 1].ofs_chunk : _parent.len_chunks) - ofs_chunk'
        doc: Byte length of the chunk header, up to the next chunk's offset or `len_chunks`.
      header:
        pos: _parent.ofs_chunk_headers + ofs_chunk
        size: len_header
        type: chunk_header
        doc: The chunk header, read without the other chunks.
      keys:
        pos: _parent.ofs_key_region + header.ofs_keys
        size: header.len_key_blob
        type:
          switch-on: _root.is_variable_length
          cases:
            true: variable_keys(header.num_keys)
            false: fixed_keys(header.num_keys)
        doc: The chunk's keys after its first one, codes `header.code + 1` onwards.
  chunk_header:
    doc: |
      `FixedLengthChunk` or `VariableLengthChunk` header; the two differ only in the last two
      fields.
    -webide-representation: 'code {code:dec}, +{num_keys:dec} keys'
    seq:
      - id: version
        type: u1
        enum: version
        valid: version::v1
        doc: Chunk version; 1 is the only one.
      - id: first_key
        -orig-id: key
        type: paimon_common::key(_root.key_kind)
        doc: The chunk's first key; it is stored only here, not in the key region.
      - id: code
        type: s4
        valid:
          min: 0
        doc: Code of `first_key`.
      - id: ofs_keys
        -orig-id: offset
        type: s4
        valid:
          min: 0
        doc: Offset of the chunk's key blob from the start of the key region.
      - id: num_keys
        -orig-id: size
        type: s4
        valid:
          min: 0
        doc: Number of keys in the key blob (Java's size), with codes `code + 1 .. code + num_keys`.
      - id: len_offsets
        -orig-id: offsetsLength
        type: s4
        if: _root.is_variable_length
        valid: 4 * num_keys
        doc: Variable-length chunks only; byte length of the key offsets at the blob start.
      - id: len_keys
        -orig-id: keysLength
        type: s4
        valid:
          min: '_root.is_variable_length ? 0 : _root.len_fixed_key * num_keys'
          max: '_root.is_variable_length ? 0x7fffffff : _root.len_fixed_key * num_keys'
        doc: |
          Byte length of the encoded keys in the key blob: `num_keys` times the key size for
          fixed-length chunks, any non-negative length for strings.
      - id: len_fixed_key
        -orig-id: fixedLength
        type: s4
        if: not _root.is_variable_length
        valid:
          min: _root.len_fixed_key
          max: _root.len_fixed_key
        doc: Fixed-length chunks only; byte length of every key.
    instances:
      len_key_blob:
        value: '_root.is_variable_length ? len_offsets + len_keys : len_keys'
        doc: Byte length of the chunk's key blob in the key region.
  fixed_keys:
    doc: A fixed-length chunk's key blob, `num_keys` keys of `len_fixed_key` bytes each.
    params:
      - id: num_keys
        type: s4
        doc: Number of keys, from the chunk header.
    seq:
      - id: keys
        type: paimon_common::key(_root.key_kind)
        repeat: expr
        repeat-expr: num_keys
        doc: The keys in code order.
  variable_keys:
    doc: |
      A variable-length chunk's key blob: the offset of every key, then the keys (length-prefixed
      UTF-8) back to back.
    params:
      - id: num_ofs_keys
        type: s4
        doc: Number of keys, from the chunk header; one offset per key.
    seq:
      - id: ofs_keys
        type: s4
        valid:
          min: 0
        repeat: expr
        repeat-expr: num_ofs_keys
        doc: Offset of each key from the start of `keys`, in code order.
      - id: keys
        type: paimon_common::key(_root.key_kind)
        repeat: expr
        repeat-expr: ofs_keys.size
        doc: The keys in code order, one per offset.
  bit_sliced_index:
    -orig-id: BitSliceIndexBitmap
    doc: |
      `BitSliceIndexBitmap`: header (with the per-slice index), then the existence bitmap and
      the slices back to back. Only the header is parsed in sequence; bitmaps are positioned
      instances, so a lookup reads only the ones it needs.
    seq:
      - id: len_header
        -orig-id: headerLength
        type: s4
        valid:
          min: 18
          max: 522
        doc: Byte length of `header`, `10 + 8 * num_slices` (1 to 64 slices).
      - id: header
        size: len_header
        type: bsi_header(len_header)
        doc: |
          Version, slice count, existence-bitmap length and slice index, confined to its
          `len_header` bytes as Java reads them from one buffer (so a damaged count inside
          cannot read past it).
      - id: ebm_mark
        type: paimon_common::position_mark(_io.pos)
        doc: Marks the existence bitmap, right after the header.
    instances:
      ofs_ebm:
        value: ebm_mark.ofs
        doc: Stream position of the existence bitmap.
      ebm:
        pos: ofs_ebm
        size: header.len_ebm
        doc: |
          The existence bitmap, the rows with a non-null value: one portable RoaringBitmap
          (roaring_bitmap.ksy), kept as bytes for a bitmap library to decode.
      ofs_slices:
        value: ofs_ebm + header.len_ebm
        doc: Stream position of the end of the existence bitmap, the base of slice offsets.
  bsi_header:
    doc: The BSI header proper, as Java reads it from one `len_header`-byte buffer.
    params:
      - id: len_header
        type: s4
        doc: Byte length of this header (the BSI's `len_header`), which fixes the slice count.
    seq:
      - id: version
        type: u1
        enum: version
        valid: version::v1
        doc: BSI version; 1 is the only one.
      - id: num_slices
        type: u1
        valid: '(len_header - 10) % 8 == 0 ? (len_header - 10) / 8 : 0'
        doc: |
          Number of slices, ONE byte: `max(bitLength(n - 1), 1)` for n keys, and 64 when n = 0.
          Checked against `len_header` (= `10 + 8 * num_slices`, so 1 to 64 slices).
      - id: len_ebm
        -orig-id: ebmLength
        type: s4
        valid:
          min: 8
        doc: Byte length of the existence bitmap.
      - id: len_indexes
        -orig-id: indexesLength
        type: s4
        valid: 8 * num_slices
        doc: Byte length of the slice index, 8 per slice.
      - id: slices
        type: slice
        repeat: expr
        repeat-expr: num_slices
        doc: Offset and length of each slice bitmap, bit 0 first.
  slice:
    doc: Where one slice bitmap lies.
    -webide-representation: '{ofs_bitmap:dec}, {len_bitmap:dec} bytes'
    seq:
      - id: ofs_bitmap
        type: s4
        valid:
          min: 0
        doc: Offset of the slice bitmap from the end of the existence bitmap.
      - id: len_bitmap
        type: s4
        valid:
          min: 8
        doc: Byte length of the slice bitmap.
    instances:
      bitmap:
        io: _root._io
        pos: _parent._parent.ofs_slices + ofs_bitmap
        size: len_bitmap
        doc: |
          The rows whose code has this slice's bit set: one portable RoaringBitmap
          (roaring_bitmap.ksy), kept as bytes for a bitmap library to decode.
