"""Reference implementations to test paimon_schema against ("oracles").

:class:`JavaReference` runs Apache Paimon's own Java writers and readers (the jar shipped in the
PyPI wheel ``paimon-python-ali==0.1.1``, paimon-bundle 1.0-SNAPSHOT) in one JVM per batch. See
:mod:`paimon_schema.selfcheck.reference.java` for the request protocol and the JSON value encoding.

    ref = JavaReference.get()                      # raises ReferenceUnavailable with the reason
    data, ranges = ref.write_deletion_vectors({"a": [1, 2, 3, 100]})
    with ref.batch() as b:                         # several requests, one JVM
        blob = b.build_index("bitmap", "INT", [1, 2, None, 1])
        dv = b.write_deletion_vectors({"f": [7]})
    blob.result(), dv.result()
"""

from .java import (
    WHEEL_REQUIREMENT,
    DvRange,
    IndexResult,
    JavaError,
    JavaReference,
    Pending,
    ReferenceBatch,
    ReferenceUnavailable,
    cache_dir,
    encode_value,
)

__all__ = [
    "WHEEL_REQUIREMENT",
    "DvRange",
    "IndexResult",
    "JavaError",
    "JavaReference",
    "Pending",
    "ReferenceBatch",
    "ReferenceUnavailable",
    "cache_dir",
    "encode_value",
]
