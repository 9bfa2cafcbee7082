meta:
  id: index_source_meta
  title: Apache Paimon data-evolution global index source metadata ("DEIX")
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: be
doc: |
  The `_SOURCE_META` bytes of a global index built for a data-evolution table: the id of the
  snapshot whose data was scanned to build it (`DataEvolutionIndexSourceMeta`), so a reader
  knows which rows the index has seen. Big-endian (`DataOutputSerializer`), exactly 16 bytes.
  The magic tells it from the source metadata of primary-key indexes, which has another layout.
  pypaimon 2.1.0 writes no source metadata (`_SOURCE_META` is null).
doc-ref:
  - https://github.com/apache/paimon/blob/master/paimon-core/src/main/java/org/apache/paimon/index/DataEvolutionIndexSourceMeta.java
seq:
  - id: magic
    contents: DEIX
    doc: 0x44454958, "DEIX".
    -orig-id: MAGIC
  - id: version
    type: s4
    enum: version
    valid: version::v1
    doc: Layout version; 1 is the only one.
    -orig-id: VERSION
  - id: scan_snapshot_id
    type: s8
    valid:
      min: 1
    -js-exact:
      because: a snapshot id, far below 2^53
    doc: |
      The snapshot scanned to build the index: positive, and the last bytes (Java rejects any
      byte after it). Kaitai parsers do not check that no byte follows; paimon_schema's reader
      does (a `FormatError` at this field).
    -orig-id: scanSnapshotId
enums:
  version:
    1:
      id: v1
      doc: The layout above.
