package io.ttlstore.errors

import io.ttlstore.errors.TtlStoreErrors.error

/**
 * The errors of what one Spark line offers and another does not: what a line cannot run or lacks.
 * Built like all of [[TtlStoreErrors]]. (A jar of another line, SPARK_LINE_MISMATCH, is refused by
 * `io.ttlstore.spark.BuiltFor`, in Java: on another Scala, no Scala code of this jar can run.)
 */
object LineErrors {

  def globalLimitInFormatV2(checkpoint: String, sparkVersion: String): TtlStoreException =
    error("GLOBAL_LIMIT_IN_FORMAT_V2", "checkpoint" -> checkpoint, "spark" -> sparkVersion)(
      s"The query of $checkpoint has a streaming global limit (limit() on a stream) and runs in checkpoint " +
        s"format v2 (spark.sql.streaming.stateStore.checkpointFormatVersion=2), which Spark $sparkVersion " +
        "cannot run: its driver fails every batch of such a query (\"ChekpointInfo length: 1, numPartitions: " +
        "...\"), whichever the provider. Start the query in format 1 (a new checkpoint without that " +
        "setting), or run it on Spark 4.1 or later.")

  def stateReaderNotInSpark(sparkVersion: String): TtlStoreException =
    error("STATE_READER_NOT_IN_SPARK", "spark" -> sparkVersion)(
      s"Spark $sparkVersion has no state data source (" + "format(\"statestore\") came with Spark 4.0), and " +
        "format(\"ttlstore_state\") and ttlstore.read_state() wrap it. See what a checkpoint holds with " +
        "`ttlstore inspect CHECKPOINT` (rows, expired rows, versions), or read its state on Spark 4.0 or later.")

  def checkpointFormatV2NotInSpark(key: String, sparkVersion: String): TtlStoreException =
    error("CHECKPOINT_FORMAT_V2_NOT_IN_SPARK", "key" -> key, "spark" -> sparkVersion)(
      s"$key=2 asks for checkpoint format v2, which Spark $sparkVersion does not have (it came with Spark " +
        "4.0): Spark would ignore the setting, and the query would run in format 1. Remove the setting, or " +
        "run the query on Spark 4.0 or later.")
}
