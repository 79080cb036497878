"""ttlstore's errors, caught by condition as Spark's are.

Every error ttlstore raises has a stable upper-case name, its *condition*, in brackets at the start of
its message (``[SNAPSHOT_CORRUPTED] The snapshot of version 12 ...``) and a SQLSTATE, following Spark's
error-condition convention. In the JVM they are ``SparkThrowable``s (``getCondition()``,
``getSqlState()``, ``getMessageParameters()``), so Spark, Spark Connect's server included, carries
them as it carries its own. In Python:

- the errors of ttlstore's own functions (:class:`ttlstore.InspectError`, :class:`ttlstore.MigrationError`,
  :class:`ttlstore.RepartitionError`) are :class:`TtlStoreError` instances, with PySpark's methods
  ``getCondition()``, ``getSqlState()`` and ``getMessageParameters()``;
- a failed query raises PySpark's own exception (``StreamingQueryException``, classic or over Spark
  Connect), with ttlstore's error among its causes: :func:`condition_of` finds its condition.

The table of record is ``io.ttlstore.errors.ErrorConditions`` (Scala); a test checks that
:data:`CONDITIONS` is exactly that table.

>>> condition_of(RuntimeError("Job aborted ... [SNAPSHOT_CORRUPTED] The snapshot of version 3 ..."))
'SNAPSHOT_CORRUPTED'
>>> CONDITIONS["SNAPSHOT_CORRUPTED"]
'58030'
"""

from __future__ import annotations

import re

#: Every condition ttlstore raises -> its SQLSTATE.
CONDITIONS: dict[str, str] = {
    "INVALID_CONFIG": "22022",
    "UNKNOWN_CONFIG": "42K06",
    "SETTING_OF_OTHER_MEMORY_MODE": "42K06",
    "BUDGET_EXCEEDS_OVERHEAD": "42K06",
    "SETTING_WITHOUT_TTLSTORE_PREFIX": "42K06",
    "EVENT_TIME_COLUMN_MISSING": "42K06",
    "EVENT_TIME_COLUMN_INVALID": "42K06",
    "TTL_ON_STREAM_STREAM_JOIN": "42K06",
    "UNKNOWN_OPERATOR": "42K06",
    "UNKNOWN_STORE": "42K06",
    "TIME_CHARACTERISTIC_CHANGED": "42K06",
    "CHECKPOINT_PINS_ANOTHER_PROVIDER": "42K06",
    "CHECKPOINT_FORMAT_MISMATCH": "42K06",
    "NATIVE_FILTER_UNAVAILABLE": "42K06",
    "LAZY_LOAD_UNAVAILABLE": "42K06",
    "UNKNOWN_CODEC": "42K06",
    "STATE_SOURCE_OPTION_REFUSED": "42K06",
    "INVALID_PARTITION_COUNT": "42K06",
    "ADOPTION_RECORD_CORRUPTED": "58030",
    "ADOPTION_RECORD_MISSING": "58030",
    "CHANGELOG_CORRUPTED": "58030",
    "CHANGELOG_MISSING": "58030",
    "CHANGELOG_TRUNCATED": "58030",
    "CHECKPOINT_ID_MISSING": "58030",
    "CHECKPOINT_LINEAGE_BROKEN": "58030",
    "LEGACY_FILE_CORRUPTED": "58030",
    "LEGACY_FILE_MISSING": "58030",
    "LEGACY_KEY_MALFORMED": "58030",
    "LOAD_FAILED": "58030",
    "SNAPSHOT_CORRUPTED": "58030",
    "SNAPSHOT_NOT_FOUND": "58030",
    "SNAPSHOT_REPAIR_FAILED": "58030",
    "SST_CORRUPTED": "58030",
    "SST_MISSING": "58030",
    "STATE_VERSION_NOT_FOUND": "58030",
    "STATE_SCHEMA_MISSING": "58030",
    "STATE_SCHEMA_UNREADABLE": "58030",
    "OFFSET_LOG_UNREADABLE": "58030",
    "OFFSET_ENTRY_MISSING": "58030",
    "OPERATOR_METADATA_MISSING": "58030",
    "COMMIT_FAILED": "58030",
    "ROCKSDB_FAILURE": "58030",
    "CHECKPOINT_READ_FAILED": "58030",
    "NOT_ENOUGH_MEMORY_TO_LOAD": "53200",
    "LOCAL_DISK_FULL": "53100",
    "UNSUPPORTED_OPERATION": "0A000",
    "UNSUPPORTED_OPERATOR": "0A000",
    "UNSUPPORTED_CHECKPOINT": "0A000",
    "REPARTITION_UNSUPPORTED_CHECKPOINT": "0A000",
    "REPARTITION_UNSUPPORTED_OPERATOR": "0A000",
    "REAL_TIME_MODE_NOT_SERVED": "0A000",
    "STATE_READER_NOT_IN_SPARK": "0A000",
    "CHECKPOINT_FORMAT_V2_NOT_IN_SPARK": "0A000",
    "GLOBAL_LIMIT_IN_FORMAT_V2": "0A000",
    "SPARK_LINE_MISMATCH": "0A000",
    "LEGACY_ROW_CHECKSUMS": "0A000",
    "FORMAT_TOO_NEW": "0A000",
    "LEGACY_FORMAT_TOO_NEW": "0A000",
    "UNKNOWN_PROVIDER": "0A000",
    "REPARTITION_OTHER_PROVIDER": "0A000",
    "NOT_A_CHECKPOINT": "55019",
    "NO_COMMITTED_BATCH": "55019",
    "NOT_MIGRATED": "55019",
    "NOT_TTLSTORE_STATE": "55019",
    "ALREADY_RAN_ON_TTLSTORE": "55019",
    "UNCOMMITTED_BATCH": "55019",
    "REPARTITION_UNFINISHED": "55019",
    "STORE_STILL_UPGRADING": "55019",
    "BATCH_WRITTEN_MEANWHILE": "55019",
    "READ_ONLY_STORE": "XXKST",
    "STORE_NOT_UPDATING": "XXKST",
}

_NAME = re.compile(r"\[([A-Z][A-Z0-9_]*)\]")


class TtlStoreError(Exception):
    """An error of ttlstore's, raised by its Python functions: the message starts with ``[CONDITION]``
    and names the file or setting and the fix. ``getCondition()``, ``getSqlState()`` and
    ``getMessageParameters()`` answer as PySpark's ``PySparkException`` does (``getErrorClass()`` is
    PySpark 3.5's name for the condition); ``name`` is the condition too."""

    def __init__(self, message: str, parameters: dict[str, str] | None = None):
        super().__init__(message)
        found = _NAME.match(message)
        self.name = found.group(1) if found and found.group(1) in CONDITIONS else None
        self._parameters = dict(parameters or {})

    def getCondition(self) -> str | None:  # noqa: N802 (PySpark's name)
        return self.name

    def getErrorClass(self) -> str | None:  # noqa: N802
        return self.name

    def getSqlState(self) -> str | None:  # noqa: N802
        return CONDITIONS.get(self.name) if self.name else None

    def getMessageParameters(self) -> dict[str, str]:  # noqa: N802
        return dict(self._parameters)


def condition_of(error: BaseException) -> str | None:
    """ttlstore's condition in ``error`` or its causes, or None when ttlstore raised none of them.

    Works on ttlstore's own errors and on PySpark's, classic or over Spark Connect: a query that fails
    in ttlstore raises ``StreamingQueryException``, whose message carries the messages of its causes
    down to ttlstore's ``[CONDITION] ...``; the innermost condition of ttlstore's is the one returned.
    """
    seen: set[int] = set()
    found = None
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, TtlStoreError) and error.name:
            return error.name
        names = [n for n in _NAME.findall(str(error)) if n in CONDITIONS]
        found = names[-1] if names else found
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return found
