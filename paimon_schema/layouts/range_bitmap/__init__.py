"""Range-bitmap file indexes (formats/range_bitmap.ksy): `scan` reads the chunked dictionary
(generated parser and struct/numpy fast paths), `reader` answers predicates as Java does,
`writer` writes the blob."""

from paimon_schema.layouts.range_bitmap.reader import RangeBitmapIndexReader
from paimon_schema.layouts.range_bitmap.writer import build_range_bitmap

__all__ = ["RangeBitmapIndexReader", "build_range_bitmap"]
