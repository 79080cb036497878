package io.ttlstore.errors

/**
 * The errors of storage that failed a store without damaging anything: a full local disk under its
 * working copy, a checkpoint file system that did not serve a file. Both say that nothing committed
 * changed and what to do; neither is ever reported as a damaged file ([[DiskFull]],
 * [[FileSystemFailure]]). And a load that failed otherwise.
 */
object StorageErrors {

  /**
   * The local disk under `root` (where the stores' working copies live) is full: `store` could not
   * `operation` in its working copy `copy`; `room` says what is left there.
   */
  def localDiskFull(store: String, root: java.io.File, copy: java.io.File, operation: String, room: String,
      cause: Throwable): TtlStoreException =
    TtlStoreErrors.errorWithCause(DiskFull.ErrorName, cause, "store" -> store, "directory" -> root,
      "operation" -> operation)(
      s"The local disk of $root is full ($room): $store could not $operation in its working copy $copy. " +
        "Nothing committed changed: the task fails, and the batch runs again from the checkpoint. Free space " +
        "on that disk, or point spark.sql.streaming.stateStore.ttlstore.localDir (else Spark's local " +
        "directories, spark.local.dir) at a disk with room for the state; see docs/reliability.md, " +
        "\"A full local disk\".")

  /** A file the checkpoint's file system failed to serve (a network failure, not damage). */
  def checkpointReadFailed(file: String, cause: Throwable): TtlStoreException =
    TtlStoreErrors.errorWithCause(FileSystemFailure.ErrorName, cause, "file" -> file)(
      s"Reading $file from the checkpoint's file system failed: ${cause.getMessage}. The file is not known to " +
        "be damaged: nothing committed changed, and the batch runs again once the file system answers. Its " +
        "client retried as far as its settings allow (for s3a://: fs.s3a.retry.limit, " +
        "fs.s3a.retry.throttle.limit, fs.s3a.attempts.maximum); check the file system's health if this persists.")

  /**
   * A load of `store` that failed: ttlstore's own errors as they are, a file system that did not
   * answer as `CHECKPOINT_READ_FAILED` on the store's `checkpoint` directory (its client's message
   * names the file), anything else as `LOAD_FAILED`.
   */
  def loadFailed(store: String, version: Long, checkpoint: String, cause: Throwable): TtlStoreException =
    cause match {
      case e: TtlStoreException => e
      case _ if FileSystemFailure.in(cause) => checkpointReadFailed(checkpoint, cause)
      case _ =>
        TtlStoreErrors.errorWithCause("LOAD_FAILED", cause, "store" -> store, "version" -> version)(
          s"Loading version $version of $store failed: ${cause.getMessage}")
    }
}
