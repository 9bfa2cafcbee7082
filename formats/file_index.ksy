meta:
  id: file_index
  title: Apache Paimon data-file index container
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: be
  imports:
    - paimon_common
doc: |
  Every data file of a Paimon table may carry one file-index container: all configured indexes
  (bloom-filter, bitmap, bsi, range-bitmap) of all its indexed columns. Small containers are
  embedded in the manifest entry (`_EMBEDDED_FILE_INDEX`), larger ones are written next to the
  data file as `<data file>.index`.

  A head lists, per column, each index's type name and the absolute position and length of its
  blob; the blobs follow the head back to back. `len_head` covers everything from the magic to
  the end of the redundant bytes, so the first blob starts at offset `len_head`. A column map
  key is indexed per key as a column named `map[key]`. An entry with position -1 and length 0
  stands for an empty index (a map key never written): Java reads it as "no related records".

  Java's reader reads `len_head - 16` bytes after the fixed fields as the head and ignores
  whatever follows the entries inside it, the redundant length included. Writers always write
  a redundant length of 0.
doc-ref:
  - https://paimon.apache.org/docs/master/concepts/spec/fileindex/
  - https://github.com/apache/paimon/blob/master/paimon-common/src/main/java/org/apache/paimon/fileindex/FileIndexFormat.java
seq:
  - id: magic
    -js-exact:
      because: the one valid value, 1493475289347502, is below 2^53
    type: s8
    enum: magic
    valid: magic::file_index
    doc: Identifies a file-index container.
  - id: version
    type: s4
    enum: version
    valid: version::v1
    doc: Container format version; 1 is the only one.
  - id: len_head
    -orig-id: headLength
    type: s4
    valid:
      min: 24
    doc: Bytes from offset 0 to the end of the redundant bytes; also where the body starts.
  - id: head
    size: len_head - 16
    type: head
    doc: |
      The rest of the head, read as a substream of its declared size: a damaged count inside
      it cannot make a parser read the blobs as head entries.
enums:
  magic:
    1493475289347502:
      id: file_index
      -orig-id: MAGIC
      doc: 'FileIndexFormat.MAGIC, bytes 00 05 4E 4E D0 1A 35 AE.'
  version:
    1:
      id: v1
      -orig-id: V_1
      doc: 'FileIndexFormat.Version.V_1, the only version.'
types:
  head:
    doc: |
      The head after its fixed fields, as Java's reader reads it: `len_head - 16` bytes holding
      the columns, the redundant length and the redundant bytes.
    seq:
      - id: num_columns
        -orig-id: columnSize
        type: s4
        valid:
          min: 0
        doc: Number of indexed columns.
      - id: columns
        type: column
        repeat: expr
        repeat-expr: num_columns
        doc: The columns and their index entries, in the writer's map order.
      - id: len_redundant
        -orig-id: REDUNDANT_LENGTH
        type: s4
        valid:
          min: 0
        doc: Length of the reserved bytes that follow; 0 from every writer, ignored by readers.
      - id: redundant
        size: len_redundant
        doc: Reserved bytes.
      - id: head_slack
        size-eos: true
        doc: Bytes left in the head after the redundant bytes; none from every writer.
  column:
    doc: One indexed column and its indexes.
    -webide-representation: '{name}'
    seq:
      - id: name
        -orig-id: columnName
        type: paimon_common::java_utf
        doc: Column name, or `map[key]` for a map key.
      - id: num_indexes
        -orig-id: indexSize
        type: s4
        valid:
          min: 0
        doc: Number of indexes on this column.
      - id: indexes
        type: index_entry
        repeat: expr
        repeat-expr: num_indexes
        doc: The column's indexes; Java writes them as bloom-filter, bitmap, bsi, range-bitmap.
  index_entry:
    doc: Where one index blob of a column lies.
    -webide-representation: '{index_type} at {ofs_blob:dec}, {len_blob:dec} bytes'
    seq:
      - id: index_type
        type: paimon_common::java_utf
        doc: Index type name, e.g. `bitmap` or `bloom-filter`.
      - id: ofs_blob
        -orig-id: start
        type: s4
        valid:
          min: -1
        doc: Absolute offset of the blob in the container, or -1 for an empty index.
      - id: len_blob
        -orig-id: length
        type: s4
        valid:
          min: 0
        doc: Byte length of the blob; 0 for an empty index.
    instances:
      is_empty:
        value: ofs_blob == -1
        doc: Whether this is an empty index entry (EMPTY_INDEX_FLAG).
      blob:
        io: _root._io
        pos: ofs_blob
        size: len_blob
        if: not is_empty
        doc: The index blob; its layout depends on `index_type`.
