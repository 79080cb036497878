package io.ttlstore.errors

import io.ttlstore.errors.TtlStoreErrors.error

/** The errors of `ttlstore migrate`, built like all of [[TtlStoreErrors]]. */
object MigrationErrors {

  def offsetLogUnreadable(file: String, why: String): TtlStoreException =
    error("OFFSET_LOG_UNREADABLE", "file" -> file)(s"$file is not an offset-log entry: $why.")

  def unknownProvider(entry: String, provider: String, adoptable: Seq[String]): TtlStoreException =
    error("UNKNOWN_PROVIDER", "file" -> entry, "provider" -> provider)(
      s"$entry pins the provider '$provider'; ttlstore adopts the state of ${adoptable.mkString(" and ")} only.")

  def unsupportedOperator(operatorId: Long, why: String): TtlStoreException =
    error("UNSUPPORTED_OPERATOR", "operatorId" -> operatorId)(s"operator $operatorId is $why")

  def unsupportedCheckpoint(checkpoint: String, written: Int, key: String): TtlStoreException =
    error("UNSUPPORTED_CHECKPOINT", "checkpoint" -> checkpoint)(
      s"$checkpoint was written in state checkpoint format v$written ($key; its commit log names the " +
        "checkpoint id of every state version), and ttlstore adopts the state of format v1 checkpoints only. " +
        "Nothing was changed. Keep this query on its provider, or run it on ttlstore from a new checkpoint " +
        "(in either format) and let it rebuild its state from the source.")

  def rowChecksums(checkpoint: String, key: String): TtlStoreException =
    error("LEGACY_ROW_CHECKSUMS", "checkpoint" -> checkpoint, "key" -> key)(
      s"$checkpoint was written with $key=true: Spark's provider stored a checksum inside every key and value " +
        "of its files, and ttlstore adopts rows without them. Nothing was changed. Keep this query on its " +
        "provider (Spark fixes the setting for a checkpoint), or run it on ttlstore from a new checkpoint; " +
        "ttlstore's own files always carry checksums (docs/configuration.md).")

  def uncommittedBatch(checkpoint: String, batch: Long): TtlStoreException =
    error("UNCOMMITTED_BATCH", "checkpoint" -> checkpoint, "batch" -> batch)(
      s"batch $batch of $checkpoint has offsets but no commit. After migration it re-runs on ttlstore from " +
        s"the state of batch ${batch - 1}. Pass --force to accept that, or restart the query on its provider " +
        "until the batch commits, stop it, and migrate then.")

  def notMigrated(checkpoint: String, record: String): TtlStoreException =
    error("NOT_MIGRATED", "checkpoint" -> checkpoint)(
      s"$checkpoint has no $record: it was not migrated by ttlstore migrate.")

  def alreadyRanOnTtlstore(checkpoint: String, batch: Long, evidence: String): TtlStoreException =
    error("ALREADY_RAN_ON_TTLSTORE", "checkpoint" -> checkpoint, "batch" -> batch)(
      s"batch $batch of $checkpoint already ran on ttlstore ($evidence); its state exists only in ttlstore's " +
        "format now, so the original provider cannot continue it.")
}
