package io.ttlstore.store.local

/**
 * How a store names the versions it loads and commits, chosen once when its provider opens (as
 * [[RowAccess]] chooses its mode), never tested per call:
 *  - [[CheckpointFormat.ByVersion]], checkpoint format v1: a version is its number, its files
 *    `<v>.changelog` and `<v>.snapshot`;
 *  - [[CheckpointFormat.ByCheckpointId]], format v2
 *    (`spark.sql.streaming.stateStore.checkpointFormatVersion=2`): a version is its number and the
 *    checkpoint id of the attempt that committed it, its files `<v>_<id>.*`, and loading follows
 *    the lineage the changelogs record ([[LineageFiles]]).
 *
 * A query's stores take the format of the query's configuration. Spark's state reader reads a
 * checkpoint in the format it was written in, whatever the reading session sets, as Spark's RocksDB
 * provider does: it passes the ids of a format v2 checkpoint's commit log.
 */
sealed abstract class CheckpointFormat(val number: Int) {
  override def toString: String = s"checkpoint format v$number"
}

object CheckpointFormat {
  case object ByVersion extends CheckpointFormat(1)
  case object ByCheckpointId extends CheckpointFormat(2)

  /** The format of a store whose versions carry checkpoint ids (`v2`) or not. */
  def of(v2: Boolean): CheckpointFormat = if (v2) ByCheckpointId else ByVersion

  /**
   * A provider's format: the query's configuration's (`v2Configured`), or for Spark's state reader
   * (`stateReader`) the checkpoint's own (`checkpointHasIds`, asked only then).
   */
  def forProvider(v2Configured: Boolean, stateReader: Boolean, checkpointHasIds: => Boolean): CheckpointFormat =
    of(v2Configured || (stateReader && checkpointHasIds))
}
