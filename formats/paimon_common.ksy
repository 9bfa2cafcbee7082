meta:
  id: paimon_common
  title: Shared pieces of Apache Paimon's index layouts
  license: Apache-2.0
  ks-version: 0.11
  endian: be
doc: |
  Building blocks that several Paimon layouts share: Java's `DataOutput.writeUTF` strings (used
  for column and index-type names in the file-index container), the per-data-type key
  encodings of the bitmap and range-bitmap indexes, and the LEB128 varints (`var_len_int`,
  `var_len_long`) of the btree and bitmap global indexes.

  Keys are written with Java's `DataOutput` (bitmap) or a big-endian `ByteBuffer`
  (range-bitmap); both give the same bytes for every type, so one `key` type serves both. The
  only difference is in the values: `DataOutput.writeFloat`/`writeDouble` canonicalize NaN, the
  `ByteBuffer` puts keep the raw NaN bits. Which Paimon data types map to which `key_kind` is a
  matter of the reader (see `paimon_schema/values/types.py`):

  | key_kind | Paimon types                                         |
  |----------|------------------------------------------------------|
  | boolean  | BOOLEAN                                              |
  | int8     | TINYINT                                              |
  | int16    | SMALLINT                                             |
  | int32    | INT, DATE (days), TIME (millis of day)               |
  | int64    | BIGINT, TIMESTAMP(p)/TIMESTAMP_LTZ(p) (millis if p <= 3, else micros), DECIMAL unscaled |
  | float32  | FLOAT (IEEE bits)                                    |
  | float64  | DOUBLE (IEEE bits)                                   |
  | string   | CHAR, VARCHAR, STRING (UTF-8)                        |
doc-ref:
  - https://paimon.apache.org/docs/master/concepts/spec/fileindex/
  - https://docs.oracle.com/javase/8/docs/api/java/io/DataInput.html#modified-utf-8
enums:
  key_kind:
    1:
      id: boolean
      doc: 'BOOLEAN: one byte, 0 or 1.'
    2:
      id: int8
      doc: 'TINYINT: a signed byte.'
    3:
      id: int16
      doc: 'SMALLINT: a big-endian s2.'
    4:
      id: int32
      doc: 'INT, DATE (days since 1970-01-01), TIME (milliseconds of the day): a big-endian s4.'
    5:
      id: int64
      doc: 'BIGINT, TIMESTAMP and TIMESTAMP_LTZ (milliseconds if precision <= 3, else microseconds), DECIMAL of precision <= 18 (unscaled): a big-endian s8.'
    6:
      id: float32
      doc: 'FLOAT: its IEEE-754 bits, a big-endian u4.'
    7:
      id: float64
      doc: 'DOUBLE: its IEEE-754 bits, a big-endian u8.'
    8:
      id: string
      doc: 'CHAR, VARCHAR, STRING: an s4 length, then the UTF-8 bytes.'
types:
  java_utf:
    -orig-id: DataOutput.writeUTF
    doc: |
      A string as `DataOutput.writeUTF` writes it: an unsigned byte count, then Java's
      *modified* UTF-8 (NUL as `C0 80`, supplementary characters as two 3-byte surrogates).
      Kaitai has no decoder for it; readers decode `value` with a modified-UTF-8 codec.
    seq:
      - id: len_value
        type: u2
        doc: Number of encoded bytes that follow (at most 65535).
      - id: value
        size: len_value
        doc: The string in Java modified UTF-8.
  key:
    doc: |
      One index key, encoded as its column's data type dictates (see the table above). Floating
      point keys are kept as their IEEE-754 bit patterns so that NaN payloads and the sign of
      zero survive; the reader turns them into numbers.
    params:
      - id: kind
        type: u1
        enum: key_kind
        doc: How the key is encoded; chosen by the reader from the column's data type.
    seq:
      - id: start
        type: position_mark(_io.pos)
        if: kind == key_kind::int64 or kind == key_kind::float64
        doc: |
          Where an 8-byte key starts, so that `hi` and `lo` can show its exact bytes (a
          JavaScript parser reads 8-byte integers into doubles, which lose precision).
      - id: int_value
        -js-exact:
          shown-by: [hi, lo]
        type:
          switch-on: kind
          cases:
            'key_kind::int8': s1
            'key_kind::int16': s2
            'key_kind::int32': s4
            'key_kind::int64': s8
        if: kind == key_kind::int8 or kind == key_kind::int16 or kind == key_kind::int32 or kind == key_kind::int64
        doc: The key of an integer kind, signed.
      - id: bits_value
        -js-exact:
          shown-by: [hi, lo]
        type:
          switch-on: kind
          cases:
            'key_kind::boolean': u1
            'key_kind::float32': u4
            'key_kind::float64': u8
        if: kind == key_kind::boolean or kind == key_kind::float32 or kind == key_kind::float64
        doc: |
          The key of a boolean (0 or 1) or floating-point kind, unsigned; for floats the
          IEEE-754 bits as written (the bitmap index canonicalizes NaN, the range-bitmap index
          keeps its payload).
      - id: utf8_value
        type: utf8_key
        if: kind == key_kind::string
        doc: The key of the string kind, a length-prefixed UTF-8 value.
    instances:
      hi:
        pos: start.ofs
        type: u4
        if: kind == key_kind::int64 or kind == key_kind::float64
        doc: |
          High 32 bits of an 8-byte key, unsigned. For int64 the key is `hi * 2^32 + lo`, less
          2^64 when `hi >= 2^31`; for float64 the bits are `hi * 2^32 + lo`.
      lo:
        pos: start.ofs + 4
        type: u4
        if: kind == key_kind::int64 or kind == key_kind::float64
        doc: Low 32 bits of an 8-byte key, unsigned.
  utf8_key:
    doc: A string key as Paimon's index writers store it.
    seq:
      - id: len_value
        type: s4
        valid:
          min: 0
        doc: Number of UTF-8 bytes that follow.
      - id: value
        size: len_value
        doc: The string's UTF-8 bytes.
  position_mark:
    doc: |
      Reads nothing; records the stream position at which it stands in the sequence. Kaitai
      evaluates a `value: _io.pos` instance only when it is first used, at whatever position
      the stream then has, so positions the layout derives from "right after this field" are
      captured as a parameter while the sequence is parsed.
    params:
      - id: ofs
        type: u8
        doc: Stream position of the mark.
  var_len_int:
    doc: |
      A non-negative int as an unsigned LEB128 varint of at most 5 bytes: 7 bits per byte, low
      groups first, the high bit set on every byte but the last (`VarLengthIntUtils.decodeInt`,
      and the SST's `MemorySliceInput.readVarLenInt`, which decode alike): the lengths and
      counts of the btree and bitmap global indexes. A fifth byte above 7 would set bit 31 (a
      negative Java int, which no writer produces and every use of it refuses).
    -webide-representation: '{value:dec}'
    seq:
      - id: b0
        type: u1
        doc: Bits 0-6, and whether a byte follows.
      - id: b1
        type: u1
        if: b0 >= 0x80
        doc: Bits 7-13, and whether a byte follows.
      - id: b2
        type: u1
        if: b0 >= 0x80 and b1 >= 0x80
        doc: Bits 14-20, and whether a byte follows.
      - id: b3
        type: u1
        if: b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80
        doc: Bits 21-27, and whether a byte follows.
      - id: b4
        type: u1
        if: b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80
        valid:
          max: 7
        doc: Bits 28-30; the last byte (Java fails on a sixth, and bit 31 would be negative).
    instances:
      value:
        value: >-
          (b0 & 0x7f)
          + (b0 >= 0x80 ? (b1 & 0x7f) << 7 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 ? (b2 & 0x7f) << 14 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 ? (b3 & 0x7f) << 21 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80 ? b4 << 28 : 0)
        doc: The decoded value, 0 to 2^31-1.
  var_len_long:
    doc: |
      A non-negative long as an unsigned LEB128 varint of at most 9 bytes here
      (`VarLengthIntUtils.decodeLong`, `MemorySliceInput.readVarLenLong`; a tenth byte could
      only set the sign bit, which Java's `BlockInfo` then rejects): the offsets and row ids of
      the btree and bitmap global indexes.
    -webide-representation: '{value:dec}'
    seq:
      - id: b0
        type: u1
        doc: Bits 0-6, and whether a byte follows.
      - id: b1
        type: u1
        if: b0 >= 0x80
        doc: Bits 7-13, and whether a byte follows.
      - id: b2
        type: u1
        if: b0 >= 0x80 and b1 >= 0x80
        doc: Bits 14-20, and whether a byte follows.
      - id: b3
        type: u1
        if: b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80
        doc: Bits 21-27, and whether a byte follows.
      - id: b4
        type: u1
        if: b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80
        doc: Bits 28-34, and whether a byte follows.
      - id: b5
        type: u1
        if: b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80 and b4 >= 0x80
        doc: Bits 35-41, and whether a byte follows.
      - id: b6
        type: u1
        if: b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80 and b4 >= 0x80 and b5 >= 0x80
        doc: Bits 42-48, and whether a byte follows.
      - id: b7
        type: u1
        if: >-
          b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80 and b4 >= 0x80 and b5 >= 0x80
          and b6 >= 0x80
        doc: Bits 49-55, and whether a byte follows.
      - id: b8
        type: u1
        if: >-
          b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80 and b4 >= 0x80 and b5 >= 0x80
          and b6 >= 0x80 and b7 >= 0x80
        valid:
          max: 0x7f
        doc: Bits 56-62; the last byte.
    instances:
      value:
        value: >-
          (b0 & 0x7f)
          + (b0 >= 0x80 ? (b1 & 0x7f) << 7 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 ? (b2 & 0x7f) << 14 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 ? (b3 & 0x7f) << 21 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80
             ? (b4 & 0x7f) * 0x800000000 / 0x80 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80 and b4 >= 0x80
             ? (b5 & 0x7f) * 0x800000000 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80 and b4 >= 0x80 and b5 >= 0x80
             ? (b6 & 0x7f) * 0x40000000000 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80 and b4 >= 0x80 and b5 >= 0x80
             and b6 >= 0x80 ? (b7 & 0x7f) * 0x2000000000000 : 0)
          + (b0 >= 0x80 and b1 >= 0x80 and b2 >= 0x80 and b3 >= 0x80 and b4 >= 0x80 and b5 >= 0x80
             and b6 >= 0x80 and b7 >= 0x80 ? b8 * 0x100000000000000 : 0)
        doc: The decoded value, 0 to 2^63-1.
