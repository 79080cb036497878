package io.ttlstore.errors

/**
 * Every error condition ttlstore raises, with its SQLSTATE, as Spark pairs its own (Spark's
 * error-condition convention: a stable upper-case name and a five-character SQLSTATE whose class
 * says what kind of failure it is). The classes are Spark's for the same kinds of state store
 * failure: `22022` an invalid setting value (Spark's INVALID_CONF_VALUE), `42K06` settings that do
 * not fit the query or checkpoint (STATE_STORE_INVALID_CONFIG_AFTER_RESTART), `58030` state that
 * cannot be loaded or written (CANNOT_LOAD_STATE_STORE), `53200` out of memory, `53100` a full disk
 * (the SQL standard's class 53, insufficient resources), `0A000` what ttlstore or this Spark does not
 * do (UNSUPPORTED_FEATURE), `55019` a checkpoint in the wrong state for the
 * command (STATE_REPARTITION_INVALID_CHECKPOINT), `XXKST` a state store used against its contract.
 * No name is one of Spark's own (a test checks Spark's registry), and the Python package's
 * `ttlstore.errors.CONDITIONS` is this table (a test checks).
 */
object ErrorConditions {

  private def all(sqlState: String, names: String*): Seq[(String, String)] = names.map(_ -> sqlState)

  val sqlStates: Map[String, String] = (
    all("22022", "INVALID_CONFIG") ++
      all("42K06", "UNKNOWN_CONFIG", "SETTING_OF_OTHER_MEMORY_MODE", "BUDGET_EXCEEDS_OVERHEAD",
        "SETTING_WITHOUT_TTLSTORE_PREFIX",
        "EVENT_TIME_COLUMN_MISSING", "EVENT_TIME_COLUMN_INVALID", "TTL_ON_STREAM_STREAM_JOIN", "UNKNOWN_OPERATOR",
        "UNKNOWN_STORE", "TIME_CHARACTERISTIC_CHANGED", "CHECKPOINT_PINS_ANOTHER_PROVIDER",
        "CHECKPOINT_FORMAT_MISMATCH", "NATIVE_FILTER_UNAVAILABLE", "LAZY_LOAD_UNAVAILABLE", "UNKNOWN_CODEC",
        "STATE_SOURCE_OPTION_REFUSED",
        "INVALID_PARTITION_COUNT") ++
      all("58030", "ADOPTION_RECORD_CORRUPTED", "ADOPTION_RECORD_MISSING", "CHANGELOG_CORRUPTED",
        "CHANGELOG_MISSING", "CHANGELOG_TRUNCATED", "CHECKPOINT_ID_MISSING", "CHECKPOINT_LINEAGE_BROKEN",
        "LEGACY_FILE_CORRUPTED", "LEGACY_FILE_MISSING", "LEGACY_KEY_MALFORMED", "LOAD_FAILED", "SNAPSHOT_CORRUPTED",
        "SNAPSHOT_NOT_FOUND", "SNAPSHOT_REPAIR_FAILED", "SST_CORRUPTED", "SST_MISSING", "STATE_VERSION_NOT_FOUND",
        "STATE_SCHEMA_MISSING", "STATE_SCHEMA_UNREADABLE", "OFFSET_LOG_UNREADABLE", "OFFSET_ENTRY_MISSING",
        "OPERATOR_METADATA_MISSING", "COMMIT_FAILED", "ROCKSDB_FAILURE", "CHECKPOINT_READ_FAILED") ++
      all("53200", "NOT_ENOUGH_MEMORY_TO_LOAD") ++
      all("53100", "LOCAL_DISK_FULL") ++
      all("0A000", "UNSUPPORTED_OPERATION", "UNSUPPORTED_OPERATOR", "UNSUPPORTED_CHECKPOINT",
        "REPARTITION_UNSUPPORTED_CHECKPOINT", "REPARTITION_UNSUPPORTED_OPERATOR", "REAL_TIME_MODE_NOT_SERVED",
        "STATE_READER_NOT_IN_SPARK", "CHECKPOINT_FORMAT_V2_NOT_IN_SPARK", "GLOBAL_LIMIT_IN_FORMAT_V2",
        "SPARK_LINE_MISMATCH", "LEGACY_ROW_CHECKSUMS", "FORMAT_TOO_NEW", "LEGACY_FORMAT_TOO_NEW", "UNKNOWN_PROVIDER",
        "REPARTITION_OTHER_PROVIDER") ++
      all("55019", "NOT_A_CHECKPOINT", "NO_COMMITTED_BATCH", "NOT_MIGRATED", "NOT_TTLSTORE_STATE",
        "ALREADY_RAN_ON_TTLSTORE", "UNCOMMITTED_BATCH", "REPARTITION_UNFINISHED", "STORE_STILL_UPGRADING",
        "BATCH_WRITTEN_MEANWHILE") ++
      all("XXKST", "READ_ONLY_STORE", "STORE_NOT_UPDATING")).toMap

  /** The SQLSTATE of `name`; an error not in the table is a bug of ttlstore's, and fails as one. */
  def sqlState(name: String): String =
    sqlStates.getOrElse(name,
      throw new IllegalArgumentException(s"ttlstore error $name has no SQLSTATE in ErrorConditions"))
}
