meta:
  id: binary_row
  title: Apache Paimon serialized BinaryRow (partition values in manifests)
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: le
doc: |
  A `BinaryRow` is Paimon's compact row of fixed arity. Manifests store one per entry for the
  data file's partition (`_PARTITION`), serialized by `SerializationUtils.serializeBinaryRow`:
  a big-endian 32-bit arity, then the row itself: a null bitset, one 8-byte little-endian slot
  per field, then a variable-length part. Offsets inside slots count from the start of the row
  (the byte after the arity).

  What a slot holds depends on the field's type, which the table schema gives, not the bytes:

  * BOOLEAN, TINYINT, SMALLINT, INT, DATE (days since 1970-01-01), TIME (milliseconds of the
    day), FLOAT: the value in the slot's low bytes;
  * BIGINT, DOUBLE, DECIMAL of precision at most 18 (the unscaled value), TIMESTAMP of precision
    at most 3 (epoch milliseconds): the whole slot;
  * strings and bytes of at most 7 bytes: inline, the bytes first and the length in the low 7
    bits of the slot's last byte, whose top bit is set;
  * longer strings and bytes, and DECIMAL of precision above 18 (big-endian two's complement
    unscaled value): `offset << 32 | length` of the bytes in the variable part;
  * TIMESTAMP of precision above 3: `offset << 32 | nanos`, the epoch milliseconds being 8
    bytes at `offset` and `nanos` the nanoseconds within that millisecond.
doc-ref:
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/data/BinaryRow.java
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/utils/SerializationUtils.java
seq:
  - id: num_slots
    -orig-id: arity
    type: s4be
    valid:
      min: 0
    doc: Number of fields (Java's arity), one slot each; the table schema says which type each has.
  - id: null_bits
    size: ((num_slots + 63 + 8) / 64) * 8
    doc: |
      The first byte is the row kind (0 for an insert, the only kind a partition has); then bit
      `i + 8`, counted from the least significant bit of each byte, is set when field `i` is
      null. Padded to whole 8-byte words.
  - id: slots
    -js-exact:
      shown-by: [slot_halves]
    type: u8
    repeat: expr
    repeat-expr: num_slots
    doc: One 8-byte slot per field, read here as an unsigned little-endian integer.
  - id: variable_part
    size-eos: true
    doc: Bytes that do not fit in a slot (long strings and bytes, wide decimals, timestamp millis).
instances:
  slot_halves:
    pos: 4 + ((num_slots + 63 + 8) / 64) * 8
    type: u4le
    repeat: expr
    repeat-expr: 2 * num_slots
    doc: |
      Every slot again as two unsigned 32-bit halves, low half first (slot `i` is
      `slot_halves[2 * i] + 2^32 * slot_halves[2 * i + 1]`): exact in every language, where
      a JavaScript parser reads `slots` into doubles, exact only up to 2^53.
