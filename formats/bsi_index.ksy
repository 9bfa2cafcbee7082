meta:
  id: bsi_index
  title: Apache Paimon BSI (bit-sliced index) file index
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: be
  imports:
    - paimon_common
    - roaring_bitmap
doc: |
  The `bsi` file index of one numeric column of one data file (`BitSliceIndexBitmapFileIndex`),
  deprecated in the docs in favour of range-bitmap. Every non-null value is mapped to a long:
  integers, DATE and TIME as they are, TIMESTAMP as epoch millis (precision <= 3) or micros,
  DECIMAL as its unscaled long. Rows are numbered from 0 in write order, nulls included.

  Rows with a value >= 0 go to the *positive* part, rows with a negative value to the
  *negative* part, which stores the absolute value `|v|`; a part is written only when it has
  at least one row. Each part (`BitSliceIndexRoaringBitmap`) is a bit-sliced index: an
  existence bitmap (ebm) of its rows and one bitmap per bit of the stored value, slice `i`
  holding the rows whose value has bit `i` set.

  Everything is written to a `DataOutput` stream with no lengths or offsets: every RoaringBitmap
  (roaring_bitmap.ksy) is self-delimiting and Java reads them back one after the other with a
  streaming deserialize. The blob length recorded in the container is not used.

  Quirk: the writer's min/max collector starts at 0, so `min` is written as 0 in both parts,
  whatever the data; stored values are therefore not shifted by a minimum, and the slice count
  is the bit length of `max`. Writing `Long.MIN_VALUE` fails (its absolute value is negative).

  Example, INT values [5, -3, null, 0, 2, -1]:

      01 00000006
      01  01 0000000000000000 0000000000000005  {0,3,4}  00000003  {0} {4} {0}
      01  01 0000000000000000 0000000000000003  {1,5}    00000002  {1,5} {1}

  Zero rows give `01 00000000 00 00`.
doc-ref:
  - https://paimon.apache.org/docs/master/concepts/spec/fileindex/
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/bsi/BitSliceIndexBitmapFileIndex.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/utils/BitSliceIndexRoaringBitmap.java
seq:
  - id: version
    type: u1
    enum: version
    valid: version::v1
    doc: Layout version; 1 is the only one (Java reads it signed and rejects only > 1).
  - id: num_rows
    -orig-id: rowNumber
    type: s4
    valid:
      min: 0
    doc: Number of rows written, nulls included.
  - id: has_positive
    type: u1
    valid:
      any-of: [0, 1]
    doc: 1 if some row has a value >= 0 (`writeBoolean`; Java reads any non-zero as true).
  - id: positive
    type: part
    if: has_positive == 1
    doc: The rows with a value >= 0 (zero counts as positive), storing the value.
  - id: has_negative
    type: u1
    valid:
      any-of: [0, 1]
    doc: 1 if some row has a negative value (`writeBoolean`; Java reads any non-zero as true).
  - id: negative
    type: part
    if: has_negative == 1
    doc: The rows with a negative value, storing its absolute value.
enums:
  version:
    1:
      id: v1
      -orig-id: VERSION_1
      doc: 'VERSION_1 of BitSliceIndexBitmapFileIndex and BitSliceIndexRoaringBitmap, the only version.'
types:
  part:
    -orig-id: BitSliceIndexRoaringBitmap
    doc: |
      One bit-sliced index over non-negative longs (`BitSliceIndexRoaringBitmap`): a row `r`
      with stored value `v` is in `ebm`, and in `slices[i]` for every bit `i` set in
      `v - min_value`. A missing part reads as empty (min = max = 0).
    -webide-representation: 'max {max_value:dec}, {num_slices:dec} slices'
    seq:
      - id: start
        type: paimon_common::position_mark(_io.pos)
        doc: Where the part starts, for the exact halves of `min_value` and `max_value`.
      - id: version
        type: u1
        enum: version
        valid: version::v1
        doc: Part version; 1 is the only one (Java rejects only > 1).
      - id: min_value
        -js-exact:
          shown-by: [min_value_hi, min_value_lo]
        -orig-id: min
        type: s8
        valid:
          min: 0
        doc: |
          Smallest stored value as the writer tracked it. Java's collector starts at 0, so
          every writer (Java and C++) writes 0 here, and values are stored unshifted.
      - id: max_value
        -js-exact:
          shown-by: [max_value_hi, max_value_lo]
        -orig-id: max
        type: s8
        valid:
          min: 0
        doc: Largest stored (absolute) value in this part.
      - id: ebm
        type: roaring_bitmap
        doc: The existence bitmap, the rows present in this part; self-delimiting.
      - id: num_slices
        type: s4
        valid:
          min: 0
          max: 64
        doc: |
          Number of slices, `64 - numberOfLeadingZeros(max_value - min_value)`, i.e. the bit
          length of the largest stored value; 0 when it is 0.
      - id: slices
        type: roaring_bitmap
        repeat: expr
        repeat-expr: num_slices
        doc: Slice `i` holds the rows whose stored value has bit `i` set; self-delimiting.
    instances:
      min_value_hi:
        pos: start.ofs + 1
        type: u4
        doc: High 32 bits of `min_value` (unsigned), exact where a JavaScript number is not.
      min_value_lo:
        pos: start.ofs + 5
        type: u4
        doc: Low 32 bits of `min_value` (unsigned).
      max_value_hi:
        pos: start.ofs + 9
        type: u4
        doc: High 32 bits of `max_value` (unsigned), exact where a JavaScript number is not.
      max_value_lo:
        pos: start.ofs + 13
        type: u4
        doc: Low 32 bits of `max_value` (unsigned).
