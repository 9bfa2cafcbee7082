"""One local Spark session for the whole test run, and the fixture tables' folder.

(Helpers live in `oracles.py`: a conftest module is not importable by name here, since
`tests/conftest.py` is also `conftest`.)"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from oracles import import_oracle


@pytest.fixture(scope="session")
def fixture_tables(shared_fixtures: Path) -> Path:
    """The folder of the Java-written warehouses (`<name>.db/<name>`)."""
    return shared_fixtures / "paimon-cpp" / "tables" / "parquet"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A `local[2]` session shared by every Spark test (started once, ~10 s)."""
    pyspark = import_oracle("pyspark")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("paimon-schema-tests")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.python.filterPushdown.enabled", "true")
               .config("spark.python.worker.reuse", "true")
               .config("spark.driver.memory", "2g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    from paimon_schema import spark as ps_spark

    ps_spark.register(session)
    assert pyspark.__version__.startswith("4.")
    yield session
    session.stop()
