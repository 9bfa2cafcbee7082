"""The installed wheel, away from the repository: it reads, writes and queries, and prints a
digest of what it wrote (an install without a C compiler must print the same).

    python .ci/wheel_smoke.py compiled|numpy     (run from a directory without the repository)
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys

import numpy as np

import paimon_schema as ps

expect = sys.argv[1]
assert not any(p for p in sys.path if p and __import__("os").path.isdir(p + "/formats")), sys.path
assert "site-packages" in ps.__file__, f"paimon_schema imported from {ps.__file__}, not the wheel"
compiled = {name: importlib.util.find_spec(f"paimon_schema.runtime.{name}") is not None
            for name in ("_pylists", "_kernels", "_avro")}
assert all(compiled.values()) if expect == "compiled" else not any(compiled.values()), compiled
assert importlib.util.find_spec("numba") is None, "numba is installed: no longer a dependency"

rng = np.random.default_rng(19)
rows = 200_000
city = rng.choice(["Lima", "Oslo", "Pune", None], rows).tolist()
amount = rng.integers(0, 100, rows)
ident = np.arange(rows, dtype=np.int64) * 7919
blobs = {"city": {"bitmap": ps.build_index("bitmap", "STRING", city, version=1)},
         "amount": {"bsi": ps.build_index("bsi", "INT", amount.astype(np.int32)),
                    "range-bitmap": ps.build_index("range-bitmap", "INT", amount.tolist())},
         "id": {"bloom-filter": ps.build_index("bloom-filter", "BIGINT", ident, items=rows, fpp=0.01)}}
container = ps.write_file_index(blobs)
index = ps.FileIndexFile.parse(container)
row_type = {"city": "STRING", "amount": "INT", "id": "BIGINT"}
truth = {r for r in range(rows) if city[r] == "Lima" and amount[r] < 30}
result = ps.evaluate(index, (ps.col("city") == "Lima") & (ps.col("amount") < 30), row_type, row_count=rows)
assert result.rows is not None and set(result.rows) == truth, "query over the container"
assert ps.evaluate(index, ps.col("id") == 7919 * 5, row_type, row_count=rows).rows is None   # bloom: may hold
dv_bytes, _ = ps.write_deletion_vectors({"data-0.parquet": sorted(truth)})
dv = ps.DeletionVectorFile.parse(dv_bytes)
assert list(dv.bins[0].bitmap) == sorted(truth)
print(hashlib.sha256(container + dv_bytes).hexdigest())
