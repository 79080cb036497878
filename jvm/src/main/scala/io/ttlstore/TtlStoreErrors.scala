package io.ttlstore

/**
 * Every error ttlstore raises. `errorName` is stable (tests and users match on it); `params` carry
 * the facts the message is built from. We do not reuse Spark's error-class exceptions: Spark looks
 * their names up in its own registry and would fail on ours.
 */
final class TtlStoreException(
    val errorName: String,
    val params: Map[String, String],
    message: String,
    cause: Throwable = null)
  extends RuntimeException(s"[$errorName] $message", cause)

/** The one place that builds [[TtlStoreException]]s, so names and wording stay consistent. */
object TtlStoreErrors {

  private def error(name: String, params: (String, Any)*)(message: String): TtlStoreException =
    new TtlStoreException(name, params.map { case (k, v) => k -> String.valueOf(v) }.toMap, message)

  private def errorWithCause(name: String, cause: Throwable, params: (String, Any)*)(
      message: String): TtlStoreException =
    new TtlStoreException(
      name, params.map { case (k, v) => k -> String.valueOf(v) }.toMap, message, cause)

  def invalidConfig(key: String, value: String, allowed: String): TtlStoreException =
    error("INVALID_CONFIG", "key" -> key, "value" -> value, "allowed" -> allowed)(
      s"Invalid value '$value' for $key: expected $allowed. Fix the setting and restart the query.")

  def unknownConfig(key: String, known: Seq[String]): TtlStoreException =
    error("UNKNOWN_CONFIG", "key" -> key)(
      s"Unknown setting $key. ttlstore's settings are: ${known.mkString(", ")}. " +
        "Check the spelling (see docs/configuration.md).")

  def unsupportedOperation(operation: String, why: String): TtlStoreException =
    error("UNSUPPORTED_OPERATION", "operation" -> operation)(
      s"ttlstore does not support $operation: $why")

  def storeNotUpdating(operation: String, store: String, state: String): TtlStoreException =
    error("STORE_NOT_UPDATING", "operation" -> operation, "store" -> store, "state" -> state)(
      s"Cannot $operation on $store: the store is $state. " +
        "A store version accepts changes only until it is committed, aborted or released.")

  def readOnlyStore(operation: String, store: String): TtlStoreException =
    error("READ_ONLY_STORE", "operation" -> operation, "store" -> store)(
      s"Cannot $operation on $store: it was opened read-only.")

  def versionNotFound(dir: String, version: Long, latest: Option[Long]): TtlStoreException =
    error("STATE_VERSION_NOT_FOUND", "dir" -> dir, "version" -> version)(
      s"Version $version of the state in $dir cannot be loaded: neither a snapshot nor the " +
        s"changelogs that lead to it exist (latest committed version: " +
        s"${latest.map(_.toString).getOrElse("none")}). The checkpoint is incomplete or was " +
        "cleaned beyond spark.sql.streaming.minBatchesToRetain.")

  def changelogMissing(file: String, version: Long): TtlStoreException =
    error("CHANGELOG_MISSING", "file" -> file, "version" -> version)(
      s"The changelog for version $version is missing: $file. The state cannot be rebuilt " +
        "without it; restore the file or restart the query from a new checkpoint.")

  def changelogTruncated(file: String, version: Long): TtlStoreException =
    error("CHANGELOG_TRUNCATED", "file" -> file, "version" -> version)(
      s"The changelog for version $version ends early: $file. It was cut short after it was " +
        "committed; restore the file from a backup.")

  def changelogCorrupted(file: String, version: Long, detail: String): TtlStoreException =
    error("CHANGELOG_CORRUPTED", "file" -> file, "version" -> version)(
      s"The changelog for version $version is corrupted ($detail): $file. " +
        "Restore the file from a backup.")

  def snapshotCorrupted(file: String, version: Long, detail: String): TtlStoreException =
    error("SNAPSHOT_CORRUPTED", "file" -> file, "version" -> version)(
      s"The snapshot of version $version is unreadable ($detail): $file. " +
        "Restore the file from a backup.")

  def sstMissing(file: String, version: Long): TtlStoreException =
    error("SST_MISSING", "file" -> file, "version" -> version)(
      s"The snapshot of version $version needs $file, which does not exist. " +
        "Restore the file from a backup.")

  def sstCorrupted(file: String, version: Long, detail: String): TtlStoreException =
    error("SST_CORRUPTED", "file" -> file, "version" -> version)(
      s"The snapshot of version $version needs $file, which is damaged ($detail). " +
        "Restore the file from a backup.")

  def formatTooNew(file: String, found: Int, supported: Int): TtlStoreException =
    error("FORMAT_TOO_NEW", "file" -> file, "found" -> found, "supported" -> supported)(
      s"$file was written in ttlstore format $found; this ttlstore reads formats up to " +
        s"$supported. Upgrade ttlstore to read this checkpoint.")

  def rocksDbFailure(store: String, operation: String, cause: Throwable): TtlStoreException =
    errorWithCause("ROCKSDB_FAILURE", cause, "store" -> store, "operation" -> operation)(
      s"RocksDB failed to $operation for $store: ${cause.getMessage}")

  def commitFailed(store: String, version: Long, cause: Throwable): TtlStoreException =
    errorWithCause("COMMIT_FAILED", cause, "store" -> store, "version" -> version)(
      s"Committing version $version of $store failed: ${cause.getMessage}")

  def loadFailed(store: String, version: Long, cause: Throwable): TtlStoreException =
    cause match {
      case e: TtlStoreException => e
      case _ =>
        errorWithCause("LOAD_FAILED", cause, "store" -> store, "version" -> version)(
          s"Loading version $version of $store failed: ${cause.getMessage}")
    }
}
