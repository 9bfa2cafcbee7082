"""What each Java-written fixture in ../shared/fixtures holds, as its README documents it.

The layout tests check every entry here; test_fixture_coverage.py fails when a deletion-vector
file or container under ../shared/fixtures is missing from this catalog.
"""

from __future__ import annotations

from pathlib import Path

DV_MAGICS = (bytes.fromhex("5e43f2d0"), bytes.fromhex("d1d33964"))
CONTAINER_MAGIC = bytes.fromhex("00054e4ed01a35ae")

TABLES = "paimon-cpp/tables/parquet"

#: Deletion-vector files: per bin (offset, Java length, 64-bit?, positions), file order.
DELETION_VECTORS: dict[str, list[tuple[int, int, bool, set[int]]]] = {
    "paimon/dv/dvindex-32": [(1, 24, False, {2, 3}), (33, 22, False, {1})],
    "paimon/dv/dvindex-64": [(1, 44, True, {2, 3}), (45, 42, True, {1})],
    "paimon-rust/dv/index-7e53780d-2faa-4e4c-9f2e-93af5082bbdb-0": [(1, 24, False, {1, 2})],
    f"{TABLES}/pk_with_bitmap_dv.db/pk_with_bitmap_dv/index/index-daed25d2-8e68-45ba-aaad-ff342666ef27-0":
        [(1, 24, False, {0, 4})],
    f"{TABLES}/pk_table_scan_and_read_dv.db/pk_table_scan_and_read_dv/index/index-16bec1d6-fa31-49bd-a240-deadcfff6003-0":
        [(1, 22, False, {0})],
    f"{TABLES}/pk_table_scan_and_read_dv.db/pk_table_scan_and_read_dv/index/index-16bec1d6-fa31-49bd-a240-deadcfff6003-1":
        [(1, 22, False, {4})],
    f"{TABLES}/pk_table_with_dv_cardinality.db/pk_table_with_dv_cardinality/index/index-62372b7b-d1cf-4dde-a162-c9d9d35006b4-1":
        [(1, 24, False, {4, 5})],
    f"{TABLES}/pk_table_with_dv_cardinality.db/pk_table_with_dv_cardinality/index/index-62372b7b-d1cf-4dde-a162-c9d9d35006b4-0":
        [(1, 22, False, {0})],
    f"{TABLES}/pk_table_with_alter_table.db/pk_table_with_alter_table/index/index-c93829f3-1a72-4d88-8401-70663ce46426-0": [],
    f"{TABLES}/pk_table_with_alter_table.db/pk_table_with_alter_table/index/index-c93829f3-1a72-4d88-8401-70663ce46426-1":
        [(1, 26, False, {2, 3, 6})],
    # Referenced by snapshot 4; the README gives no positions: the index manifest's ranges
    # (offset, length, cardinality) are checked for these in test_deletion_vectors.py.
    f"{TABLES}/pk_table_with_alter_table.db/pk_table_with_alter_table/index/index-84326ea4-5d74-40a2-8a08-9d43d29f657a-0":
        [(1, 22, False, {1})],
    f"{TABLES}/pk_table_with_alter_table.db/pk_table_with_alter_table/index/index-84326ea4-5d74-40a2-8a08-9d43d29f657a-1":
        [(1, 24, False, {2, 6})],
    f"{TABLES}/pk_dv_index_in_data_no_external.db/pk_dv_index_in_data_no_external/f1=10/bucket-0/index-6a52df57-e0a0-4be7-b571-2fcc437de0eb-0":
        [(1, 22, False, {0})],
    f"{TABLES}/pk_dv_index_in_data_no_external.db/pk_dv_index_in_data_no_external/f1=10/bucket-1/index-6a52df57-e0a0-4be7-b571-2fcc437de0eb-1":
        [(1, 22, False, {4})],
    f"{TABLES}/pk_dv_index_not_in_data_no_external.db/pk_dv_index_not_in_data_no_external/index/index-cb9839b0-ad4e-4d71-8ef7-445d5440988e-0":
        [(1, 22, False, {0})],
    f"{TABLES}/pk_dv_index_not_in_data_no_external.db/pk_dv_index_not_in_data_no_external/index/index-cb9839b0-ad4e-4d71-8ef7-445d5440988e-1":
        [(1, 22, False, {4})],
    f"{TABLES}/pk_09.db/pk_09/index/index-ff7801ad-df90-49b2-9619-586eab9c68e3-0":
        [(1, 22, False, {0}), (31, 22, False, {0})],
    f"{TABLES}/pk_09.db/pk_09/index/index-ff7801ad-df90-49b2-9619-586eab9c68e3-1": [(1, 22, False, {4})],
    f"{TABLES}/pk_09.db/pk_09/index/index-ff7801ad-df90-49b2-9619-586eab9c68e3-2": [],
    f"{TABLES}/pk_btree_e2e.db/pk_btree_e2e/index/index-5561631d-80ef-45bc-8b87-3d1a2876816d-0":
        [(1, 24, False, {9, 19})],
    f"{TABLES}/pk_btree_e2e.db/pk_btree_e2e/index/index-a353b7ca-671b-4423-bff5-fd2888db7536-0": [],
}

_BLOOM = 599071
_BITMAP_SIDECAR = [("f0", "bitmap", 96, 176), ("f1", "bitmap", 272, 102), ("f2", "bitmap", 374, 108)]

#: Containers: head length and entries (column, index type, absolute offset, length), file order.
CONTAINERS: dict[str, tuple[int, list[tuple[str, str, int, int]]]] = {
    "paimon-cpp/file-index/java_empty_entry_container.bin": (47, [("c1", "empty", -1, 0)]),
    "paimon-cpp/file-index/bitmap_3col_container.bin":
        (96, [("f0", "bitmap", 96, 131), ("f1", "bitmap", 227, 74), ("f2", "bitmap", 301, 76)]),
    f"{TABLES}/append_with_bitmap_no_embedding.db/append_with_bitmap_no_embedding/bucket-0/data-783929b2-49d4-4006-a898-194a62e3278d-0.parquet.index":
        (96, _BITMAP_SIDECAR),
    f"{TABLES}/append_with_bitmap_no_embedding.db/external-path/bucket-0/data-783929b2-49d4-4006-a898-194a62e3278d-0.parquet.index":
        (96, _BITMAP_SIDECAR),
    f"{TABLES}/pk_with_bitmap_dv.db/pk_with_bitmap_dv/bucket-0/data-bfa36b28-40e7-4026-893b-d23116973174-0.parquet.index":
        (96, _BITMAP_SIDECAR),
    f"{TABLES}/pk_with_bitmap_dv.db/pk_with_bitmap_dv/bucket-0/data-bfa36b28-40e7-4026-893b-d23116973174-1.parquet.index":
        (96, [("f0", "bitmap", 96, 68), ("f1", "bitmap", 164, 54), ("f2", "bitmap", 218, 62)]),
    f"{TABLES}/append_with_bloomfilter.db/append_with_bloomfilter/bucket-0/data-79a27bc0-bcec-4062-9915-83ec8eb1622d-0.parquet.index":
        (174, [(f"f{i}", "bloom-filter", 174 + i * _BLOOM, _BLOOM) for i in range(5)]),
    f"{TABLES}/append_with_bsi.db/append_with_bsi/bucket-0/data-af9e31b7-b44d-4a0e-85ae-5877d224ec9f-0.parquet.index":
        (87, [("f1", "bsi", 87, 231), ("f2", "bsi", 318, 175), ("f4", "bsi", 493, 1437)]),
    f"{TABLES}/append_with_bsi_bitmap_bloomfilter.db/append_with_bsi_bitmap_bloomfilter/bucket-0/data-15f89029-c10f-437f-b819-338c3e8ab2ee-0.parquet.index":
        (277, [("f0", "bloom-filter", 277, _BLOOM), ("f0", "bitmap", 599348, 176),
               ("f1", "bloom-filter", 599524, _BLOOM), ("f1", "bitmap", 1198595, 130),
               ("f1", "bsi", 1198725, 231), ("f2", "bloom-filter", 1198956, _BLOOM),
               ("f2", "bitmap", 1798027, 138), ("f2", "bsi", 1798165, 175),
               ("f3", "bloom-filter", 1798340, _BLOOM), ("f4", "bloom-filter", 2397411, _BLOOM),
               ("f4", "bitmap", 2996482, 158), ("f4", "bsi", 2996640, 1437)]),
    f"{TABLES}/append_with_rangebitmap.db/append_with_rangebitmap/bucket-0/data-2fb852e2-e4b5-4807-bf92-04401ed10560-0.parquet.index":
        (174, [("f0", "range-bitmap", 174, 210), ("f1", "range-bitmap", 384, 242),
               ("f2", "range-bitmap", 626, 210), ("f3", "range-bitmap", 836, 242),
               ("f4", "range-bitmap", 1078, 210)]),
    f"{TABLES}/append_with_rangebitmap_multi_chunk.db/append_with_rangebitmap_multi_chunk/bucket-0/data-e4673af1-afcb-4b84-b69a-ae472ba517f2-0.parquet.index":
        (174, [("f0", "range-bitmap", 174, 235), ("f1", "range-bitmap", 409, 267),
               ("f2", "range-bitmap", 676, 235), ("f3", "range-bitmap", 911, 267),
               ("f4", "range-bitmap", 1178, 235)]),
}


def sniff(data: bytes) -> str | None:
    """'dv' or 'container' for a file with that layout's signature, else None."""
    if data.startswith(CONTAINER_MAGIC):
        return "container"
    if data[:1] == b"\x01" and (len(data) == 1 or data[5:9] in DV_MAGICS):
        return "dv"
    return None


def discover(root: Path) -> dict[str, str]:
    """Every deletion-vector file and container under `root`, by relative path."""
    found = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        with path.open("rb") as f:
            kind = sniff(f.read(16))
        if kind:
            found[path.relative_to(root).as_posix()] = kind
    return found
