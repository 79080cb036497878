package io.ttlstore.errors

import io.ttlstore.errors.TtlStoreErrors.error

/** The errors of `ttlstore repartition`, built like all of [[TtlStoreErrors]]. */
object RepartitionErrors {

  def invalidPartitionCount(n: Int): TtlStoreException =
    error("INVALID_PARTITION_COUNT", "partitions" -> n)(
      s"--partitions must be a whole number greater than zero, got $n.")

  def noCommittedBatch(checkpoint: String): TtlStoreException =
    error("NO_COMMITTED_BATCH", "checkpoint" -> checkpoint)(
      s"$checkpoint has no committed batch, so it has no state to repartition. Run the query until it " +
        "commits a batch (an availableNow trigger stops by itself), stop it, and repartition then; or " +
        "start it with the partitions you want (spark.sql.shuffle.partitions) from a new checkpoint.")

  def offsetEntryMissing(checkpoint: String, batch: Long): TtlStoreException =
    error("OFFSET_ENTRY_MISSING", "checkpoint" -> checkpoint, "batch" -> batch)(
      s"$checkpoint/offsets/$batch is missing: batch $batch is committed but its offset log entry is gone " +
        "(a very low spark.sql.streaming.minBatchesToRetain, or files deleted by hand). Restore it from a " +
        "backup; nothing was changed.")

  def uncommittedBatch(checkpoint: String, batch: Long, lastCommitted: Long): TtlStoreException =
    error("UNCOMMITTED_BATCH", "checkpoint" -> checkpoint, "batch" -> batch)(
      s"Batch $batch of $checkpoint has offsets but no commit (the last committed batch is $lastCommitted): " +
        "the query is running, or its last batch failed. Nothing was changed. Let the query finish its " +
        "batch and stop it (an availableNow trigger stops by itself once it has caught up), then " +
        "repartition; repartitioning past the batch would run it again with other partitions.")

  def repartitionUnfinished(checkpoint: String, batch: Long, itsPartitions: Int, requested: Int): TtlStoreException =
    error("REPARTITION_UNFINISHED", "checkpoint" -> checkpoint, "batch" -> batch)(
      s"Batch $batch of $checkpoint is a repartition to $itsPartitions partitions that did not finish. " +
        s"Run ttlstore repartition with --partitions $itsPartitions to finish it (you asked for $requested); " +
        "then repartition again to any other count.")

  /** A query started on a checkpoint whose last batch is an unfinished repartition (Spark before 4.2). */
  def repartitionUnfinishedAtStart(
      checkpoint: String, batch: Long, itsPartitions: Int, spark: String): TtlStoreException =
    error("REPARTITION_UNFINISHED", "checkpoint" -> checkpoint, "batch" -> batch)(
      s"Batch $batch of $checkpoint is a repartition to $itsPartitions partitions that did not finish, " +
        s"and Spark $spark would run it as an ordinary batch on state that is only partly repartitioned. " +
        s"Nothing was run. Finish it with ttlstore repartition $checkpoint --partitions $itsPartitions, " +
        "then start the query.")

  def repartitionOtherProvider(checkpoint: String, provider: String): TtlStoreException =
    error("REPARTITION_OTHER_PROVIDER", "checkpoint" -> checkpoint, "provider" -> provider)(
      s"$checkpoint runs on $provider, not on ttlstore, and ttlstore repartitions only its own state. For " +
        "Spark's RocksDBStateStoreProvider use Spark's spark._streamingCheckpointManager.repartition(" +
        "checkpoint, n); or move the query to ttlstore first (ttlstore migrate, then run one batch).")

  def repartitionUnsupportedCheckpoint(checkpoint: String, why: String): TtlStoreException =
    error("REPARTITION_UNSUPPORTED_CHECKPOINT", "checkpoint" -> checkpoint)(
      s"ttlstore cannot repartition $checkpoint: $why. Nothing was changed.")

  def repartitionUnsupportedOperator(checkpoint: String, operatorId: Long, name: String): TtlStoreException =
    error("REPARTITION_UNSUPPORTED_OPERATOR", "checkpoint" -> checkpoint, "operatorId" -> operatorId)(
      s"Stateful operator $operatorId of $checkpoint is $name, whose state ttlstore cannot repartition: it " +
        "repartitions aggregations, dropDuplicates (also within watermark), flatMapGroupsWithState, " +
        "applyInPandasWithState, session windows and stream-stream joins. Nothing was changed.")

  def operatorMetadataMissing(file: String): TtlStoreException =
    error("OPERATOR_METADATA_MISSING", "file" -> file)(
      s"$file is missing: Spark 4.0 and later write it when a query with a stateful operator starts, and " +
        "repartition reads each operator and its keys there; Spark 3.5 writes none. Run the query for one batch " +
        "on Spark 4.0 or later (a checkpoint of Spark 3.5 continues there), stop it, and repartition then. " +
        "Nothing was changed.")

  def stateSchemaMissing(file: String): TtlStoreException =
    error("STATE_SCHEMA_MISSING", "file" -> file)(
      s"$file is missing, and without the state's key schema the partition of a key cannot be computed. " +
        "Spark writes it when the query starts with spark.sql.streaming.stateStore.stateSchemaCheck=true " +
        "(the default): run one batch with it, stop the query, and repartition then. Nothing was changed.")

  def stateSchemaUnreadable(file: String, why: String): TtlStoreException =
    error("STATE_SCHEMA_UNREADABLE", "file" -> file)(
      s"$file cannot be read as Spark's state schema file: $why. Nothing was changed.")

  def storeStillUpgrading(store: String, legacyRows: Long): TtlStoreException =
    error("STORE_STILL_UPGRADING", "store" -> store, "legacyRows" -> legacyRows)(
      s"$store still holds $legacyRows rows adopted from Spark's provider and not yet upgraded to ttlstore's " +
        "format. Repartition before migrating (Spark's repartition, on its RocksDB provider), or run the " +
        "query until ttlstoreLegacyRows is 0. Nothing was changed.")

  def batchWrittenMeanwhile(file: String): TtlStoreException =
    error("BATCH_WRITTEN_MEANWHILE", "file" -> file)(
      s"$file appeared while ttlstore repartition was working: the query is running. Stop it and run " +
        "ttlstore repartition again.")
}
