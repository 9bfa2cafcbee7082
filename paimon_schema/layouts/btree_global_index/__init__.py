"""Btree global index files (formats/btree_global_index.ksy): an SST of sorted keys and their
row ids. `reader` answers queries lazily, `writer` writes Java's (and pypaimon's) bytes,
`keys` is Java's `KeySerializer`, `sst` the file's blocks and footer, `bloom` its optional
bloom filter."""

from paimon_schema.layouts.btree_global_index.reader import BTreeGlobalIndexReader
from paimon_schema.layouts.btree_global_index.sst import MAGIC, has_signature
from paimon_schema.layouts.btree_global_index.writer import BTreeIndexFile, write_btree_global_index

__all__ = ["MAGIC", "BTreeGlobalIndexReader", "BTreeIndexFile", "has_signature", "write_btree_global_index"]
