meta:
  id: hash_index
  title: Apache Paimon dynamic-bucket hash index file
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: be
doc: |
  A dynamic-bucket (`HASH`) index file lists the hash codes of the primary keys stored in one
  bucket, so that a writer can route a key to the bucket that already holds it. It is a bare
  sequence of big-endian 32-bit integers: no header, version, count or checksum. The count is
  the file size divided by four (also recorded as `_ROW_COUNT` in the manifest).

  Each integer is `BinaryRow.hashCode()` of a key: Murmur3 x86_32 with seed 42 over the
  BinaryRow bytes. The writer emits the distinct hashes in the iteration order of a fastutil
  `IntOpenHashSet`; readers build a set, so order carries no meaning.

  Java's reader silently drops a trailing partial integer (1 to 3 bytes). No Java writer
  produces one, and it means the file was cut short, so this spec rejects it.
doc-ref:
  - https://paimon.apache.org/docs/master/concepts/spec/tableindex/
  - https://github.com/apache/paimon/blob/master/paimon-core/src/main/java/org/apache/paimon/index/HashIndexFile.java
seq:
  - id: hashes
    type: s4
    repeat: eos
    doc: Hash codes of the bucket's keys, one per distinct hash.
