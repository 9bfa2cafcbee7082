meta:
  id: deletion_vectors
  title: Apache Paimon deletion-vector index file
  application: Apache Paimon
  license: Apache-2.0
  ks-version: 0.11
  endian: be
  imports:
    - roaring_bitmap
doc: |
  A deletion-vector (DV) index file holds, for each data file of a bucket, the set of row
  positions that are deleted. It starts with a version byte and continues with one *bin* per
  data file, back to back, with no count and no footer: the file name a bin belongs to, and
  where the bin sits, are recorded only in the manifest (`IndexFileMeta` deletion-vector ranges:
  the offset of the bin's size field, and a length that is `len_payload` for a 32-bit bin and
  `len_payload + 8` for a 64-bit bin).

  Each bin is a big-endian size `S`, `S` bytes of magic plus bitmap, and a CRC32 over those `S`
  bytes. The magic says which kind of bitmap follows, so one file may mix both kinds:

  * 32-bit bins (`BitmapDeletionVector`): magic 1581511376 written big-endian, then a 32-bit
    RoaringBitmap in portable format (see roaring_bitmap.ksy). Positions are at most 2^31-1.
  * 64-bit bins (`Bitmap64DeletionVector`, Iceberg's deletion-vector-v1 framing): magic
    1681511377 written *little-endian* (bytes `D1 D3 39 64`), then a 64-bit Roaring bitmap: a
    little-endian bucket count and, for every high 32-bit key from 0 to count-1 (gaps
    included, as empty bitmaps), the key and a 32-bit portable RoaringBitmap of the low halves.

  Paimon writes every bitmap after `runOptimize()`, so its bytes follow Java's container
  choices. An empty map of vectors still writes the one-byte file `01`.
doc-ref:
  - https://paimon.apache.org/docs/master/concepts/spec/tableindex/
  - https://github.com/apache/paimon/blob/master/paimon-core/src/main/java/org/apache/paimon/deletionvectors/DeletionVectorsIndexFile.java
seq:
  - id: version
    type: u1
    enum: file_version
    valid: file_version::v1
    doc: File format version; 1 is the only one.
  - id: bins
    type: bin
    repeat: eos
    doc: One deletion vector per data file, in the writer's map order.
enums:
  file_version:
    1:
      id: v1
      -orig-id: VERSION_ID_V1
      doc: 'DeletionVectorsIndexFile.VERSION_ID_V1, the only version.'
  bin_magic:
    0x5e43f2d0:
      id: bitmap32
      doc: 'BitmapDeletionVector.MAGIC_NUMBER 1581511376, written big-endian: a 32-bit RoaringBitmap follows.'
    0xd1d33964:
      id: bitmap64
      doc: 'Bitmap64DeletionVector.MAGIC_NUMBER 1681511377, written little-endian: a 64-bit Roaring bitmap follows.'
types:
  bin:
    doc: One data file's deletion vector, framed by its size and checksum.
    -webide-representation: '{magic}, {len_payload:dec} bytes'
    seq:
      - id: len_payload
        -orig-id: size
        type: s4
        valid:
          min: 4
        doc: |
          Number of bytes of `magic` plus `bitmap` (Java's `S`); the CRC covers exactly these.
      - id: magic
        -orig-id: MAGIC_NUMBER
        type: u4
        enum: bin_magic
        valid:
          any-of:
            - bin_magic::bitmap32
            - bin_magic::bitmap64
        doc: |
          Kind of bitmap; read as a big-endian u4. The 64-bit magic 1681511377 is stored
          little-endian and so reads as 0xd1d33964.
      - id: bitmap
        size: len_payload - 4
        type:
          switch-on: magic
          cases:
            'bin_magic::bitmap64': bitmap64
        doc: |
          The deleted positions. For a 32-bit bin these bytes are one portable RoaringBitmap
          (roaring_bitmap.ksy), kept as bytes for a bitmap library to decode.
      - id: checksum
        type: u4
        -checksum:
          algorithm: crc32
          over: [magic, bitmap]
        doc: |
          CRC-32 of the `len_payload` bytes of `magic` and `bitmap`, stored big-endian: the
          IEEE 802.3 polynomial 0x04C11DB7, reflected, initial value and final XOR 0xFFFFFFFF
          (Java's `java.util.zip.CRC32`, zlib's `crc32`; the CRC of the ASCII bytes
          "123456789" is 0xCBF43926). Kaitai has no checksum check: parsers generated from this
          spec, for any language, read the stored value and do NOT verify it. `-checksum` is
          this repository's own key: tools/construct_emitter.py turns it into a codec that
          computes the CRC when writing, and paimon_schema verifies it when reading (unless
          asked not to, `verify_checksum=False`). Java's reader (`DeletionVector.read`) skips
          it; its writers compute it with `java.util.zip.CRC32`.
  bitmap64:
    doc: A 64-bit Roaring bitmap in the portable 64-bit format, with dense buckets.
    seq:
      - id: num_buckets
        -js-exact:
          because: valid only up to 0x7fffffff
        type: u8le
        valid:
          max: 0x7fffffff
        doc: Number of buckets that follow; Java writes the highest key plus one.
      - id: buckets
        type: bucket(_index)
        repeat: expr
        repeat-expr: num_buckets
        doc: |
          Buckets in ascending key order. Java writes every key 0..num_buckets-1, empty ones
          included; its reader also accepts CRoaring's sparse form and fills the gaps.
      - id: trailing
        size-eos: true
        doc: |
          Bytes after the last bucket inside the bin: none from every writer. Java's reader
          stops after the last bucket; paimon_schema rejects such bytes. (Not a `valid` check
          here: `valid: expr` is the only way to say "empty", and Kaitai's Nim target cannot
          compile it.)
  bucket:
    doc: The positions whose high 32 bits equal `key`.
    -webide-representation: 'key {key:dec}'
    params:
      - id: index
        type: s4
        doc: Position of the bucket in the bin, to compare its key with the previous one's.
    seq:
      - id: key
        type: u4le
        valid:
          min: 'index == 0 ? 0 : _parent.buckets[index - 1].key + 1'
          max: 0x7ffffffe
        doc: |
          High 32 bits of the positions in this bucket (at most 2^31-2); keys ascend strictly,
          so each is above the previous bucket's.
      - id: bitmap
        type: roaring_bitmap
        doc: Low 32 bits of the positions, a portable 32-bit RoaringBitmap.
