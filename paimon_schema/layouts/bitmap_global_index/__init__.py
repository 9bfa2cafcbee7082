"""The bitmap global index file (formats/bitmap_global_index.ksy): a lazy reader answering
equal / in / is-null / is-not-null with 64-bit row-id bitmaps, and writers of both versions.

- `blocks`: the framing (footer, varints, blocks and trailers) read fast, and the generated
  parser's located `FormatError` for whatever the fast path declines;
- `keys`: Java's global-index `KeySerializer` (values to key bytes, typed order);
- `reader`: `BitmapGlobalIndexReader`, which reads what Java's reader reads for a lookup: the
  48-byte footer, the index block, one dictionary block per key and the key's bitmap (a file
  object is read block by block, never whole; `test_bitmap_global_index.py` counts the bytes);
- `writer`: `build_bitmap_global_index` (the file and its manifest metadata) and
  `write_bitmap_global_index` (the file's bytes).

Version 1 files sort keys by their bytes (unsigned) and are searched that way, version 2 files
by typed value, as Java's reader (apache/paimon#8613 at 1e2a322e) does by the footer's version.
The version-1 writer is byte-identical to pypaimon 2.1.0's `BitmapIndexWriter` (bitmaps without
`runOptimize`); `run_optimize=True` makes it Java's `BitmapGlobalIndexWriter`; version 2 is
Java's `SortedBitmapGlobalIndexWriter`. (Checked once against Java's own classes compiled from
apache/paimon at 1e2a322e: 800 random INT/BIGINT/STRING columns, both versions, byte-identical;
no Java jar on PyPI holds that code, so CI cannot run it.) The spec's doc lists where pypaimon,
pypaimon-rust and Java's master disagree.
"""

from paimon_schema.layouts.bitmap_global_index.blocks import FOOTER, TRAILER, has_signature
from paimon_schema.layouts.bitmap_global_index.keys import GlobalKeys
from paimon_schema.layouts.bitmap_global_index.reader import BitmapGlobalIndexReader
from paimon_schema.layouts.bitmap_global_index.writer import (BitmapIndexFile, build_bitmap_global_index,
                                                              write_bitmap_global_index)

__all__ = ["FOOTER", "TRAILER", "BitmapGlobalIndexReader", "BitmapIndexFile", "GlobalKeys",
           "build_bitmap_global_index", "has_signature", "write_bitmap_global_index"]
