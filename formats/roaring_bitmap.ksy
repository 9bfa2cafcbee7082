meta:
  id: roaring_bitmap
  title: RoaringBitmap portable serialization (32-bit)
  license: Apache-2.0
  ks-version: 0.11
  endian: le
doc: |
  The interoperable "portable" format of a 32-bit RoaringBitmap, as org.roaringbitmap (Java),
  CRoaring and pyroaring write it. Paimon embeds it in deletion vectors and in the bitmap, BSI
  and range-bitmap indexes; it is little-endian even where it sits inside a big-endian layout.

  The 32-bit values are split by their high 16 bits into containers, sorted by that key. Each
  container holds the low 16 bits of its values in one of three forms:

  * array (at most 4096 values): the sorted values, 2 bytes each;
  * bitmap (more than 4096 values): 65536 bits as 1024 little-endian 64-bit words;
  * run: a list of (start, length - 1) runs; only marked by a bit in the run-flag bitset.

  A reader tells array from bitmap by the cardinality alone, so a writer must respect the 4096
  threshold. Without run containers the header is a 4-byte cookie 12346 and a 4-byte count;
  with runs the cookie 12347 carries `count - 1` in its high 16 bits, followed by one run flag
  bit per container. The table of byte offsets of each container is present unless there are
  run containers and fewer than four containers. Java skips those offsets without checking
  them; CRoaring checks them.

  Container contents are kept here as sized byte regions (their element layout is in each
  field's doc) so that inspecting a large bitmap costs a few operations per container, not
  per value.
doc-ref:
  - https://github.com/RoaringBitmap/RoaringFormatSpec
  - https://paimon.apache.org/docs/master/concepts/spec/fileindex/
seq:
  - id: cookie
    type: u2
    enum: cookie
    valid:
      any-of:
        - cookie::no_run_containers
        - cookie::has_run_containers
    doc: Format marker; also says whether run containers (and the run-flag bitset) are present.
  - id: num_containers_minus_one
    type: u2
    if: has_runs
    doc: Number of containers minus one (only in the cookie-12347 form).
  - id: zero_padding
    type: u2
    valid: 0
    if: not has_runs
    doc: High half of the 4-byte cookie 12346, always zero.
  - id: num_containers_field
    type: u4
    valid:
      max: 65536
    if: not has_runs
    doc: Number of containers (only in the cookie-12346 form).
  - id: run_flags
    size: (num_descriptors + 7) / 8
    if: has_runs
    doc: Bit `i % 8` of byte `i / 8` is set when container `i` is a run container.
  - id: descriptors
    type: descriptor
    repeat: expr
    repeat-expr: num_descriptors
    doc: Key and cardinality of every container, ascending by key.
  - id: ofs_containers
    type: u4
    repeat: expr
    repeat-expr: descriptors.size
    if: has_offsets
    doc: Byte offset of each container's data from the start of the bitmap.
  - id: containers
    type: container(descriptors[_index].cardinality, has_runs and (run_flags[_index / 8] >> (_index % 8)) & 1 == 1)
    repeat: expr
    repeat-expr: descriptors.size
    doc: The containers' data, in key order, back to back.
instances:
  has_runs:
    value: cookie == cookie::has_run_containers
    doc: Whether the cookie-12347 form (with run containers) is used.
  num_descriptors:
    value: 'has_runs ? num_containers_minus_one + 1 : num_containers_field'
    doc: Number of containers, each with one descriptor (and one offset, when present).
  has_offsets:
    value: not has_runs or num_descriptors >= 4
    doc: Whether the container offset table is present.
enums:
  cookie:
    12346:
      id: no_run_containers
      -orig-id: SERIAL_COOKIE_NO_RUNCONTAINER
      doc: 'SERIAL_COOKIE_NO_RUNCONTAINER: no run containers; a 4-byte cookie, then a 4-byte container count.'
    12347:
      id: has_run_containers
      -orig-id: SERIAL_COOKIE
      doc: 'SERIAL_COOKIE: run containers present; the cookie''s high 16 bits hold the container count minus one.'
types:
  descriptor:
    doc: Which 16-bit high half a container covers, and how many values it holds.
    -webide-representation: 'key {key:dec}, {cardinality:dec} values'
    seq:
      - id: key
        type: u2
        doc: High 16 bits shared by the container's values.
      - id: cardinality_minus_one
        type: u2
        doc: Number of values in the container minus one.
    instances:
      cardinality:
        value: cardinality_minus_one + 1
        doc: Number of values in the container.
  container:
    doc: One container; its form follows from the run flag and the cardinality.
    params:
      - id: cardinality
        type: u4
        doc: Number of values, from the descriptor.
      - id: is_run
        type: bool
        doc: Whether the run flag of this container is set.
    seq:
      - id: array_values
        size: 2 * cardinality
        if: kind == container_kind::array
        doc: Array container, `cardinality` sorted u2 low halves.
      - id: bitmap_words
        size: 8192
        if: kind == container_kind::bitmap
        doc: Bitmap container, 1024 u8 words; value `v` is bit `v % 64` of word `v / 64`.
      - id: num_runs
        type: u2
        if: kind == container_kind::run
        doc: Number of runs in a run container.
      - id: runs
        size: 4 * num_runs
        if: kind == container_kind::run
        doc: Run container, `num_runs` pairs of (start u2, length - 1 u2), ascending, disjoint.
    instances:
      kind:
        value: 'is_run ? container_kind::run : cardinality > 4096 ? container_kind::bitmap : container_kind::array'
        doc: The container's form.
    enums:
      container_kind:
        1:
          id: array
          doc: 'At most 4096 values, stored as sorted u2 low halves.'
        2:
          id: bitmap
          doc: 'More than 4096 values, stored as a 65536-bit bitmap.'
        3:
          id: run
          doc: 'Runs of consecutive values as (start, length - 1) pairs; flagged in `run_flags`.'
