"""Bitmap file indexes (formats/bitmap_index.ksy): `scan` reads the dictionary and index
blocks (generated parser and struct/numpy fast paths), `reader` answers predicates as Java
does, `writer` lays out and writes the blob, `javaorder` reproduces Java's HashMap order."""

from paimon_schema.layouts.bitmap_index.reader import BitmapIndexReader
from paimon_schema.layouts.bitmap_index.writer import build_bitmap_index

__all__ = ["BitmapIndexReader", "build_bitmap_index"]
