"""Bloom-filter file indexes (formats/bloom_filter.ksy): `reader`, `writer`, Paimon's
`hashing` and the compiled bit-setting `kernel`."""

from paimon_schema.layouts.bloom_filter.reader import BloomFilterIndexReader
from paimon_schema.layouts.bloom_filter.writer import build_bloom_filter

__all__ = ["BloomFilterIndexReader", "build_bloom_filter"]
