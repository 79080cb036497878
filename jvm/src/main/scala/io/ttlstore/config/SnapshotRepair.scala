package io.ttlstore.config

/**
 * Spark's automatic snapshot repair (`spark.sql.streaming.stateStore.autoSnapshotRepair.*`, Spark
 * 4.2 and later, on by default), as ttlstore applies it: a version whose newest snapshot fails to
 * load `attemptsBeforeRepair` times in a row is built from an older base instead, an older snapshot
 * or the state below every snapshot (the empty state, or the adopted state of Spark's provider),
 * plus the changelogs after it. The changelogs are the record of every commit, so the version built
 * that way is the one the damaged snapshot held. Pure: the caller lists, loads and counts.
 *
 * @param enabled whether a failed snapshot is repaired around; false: its error fails the load
 * @param attemptsBeforeRepair how many times the newest snapshot is tried before older bases are
 * @param maxChangelogReplay the most changelogs a repaired load may replay
 */
final case class SnapshotRepair(enabled: Boolean, attemptsBeforeRepair: Int, maxChangelogReplay: Int) {

  /**
   * The bases to build `version` from once snapshot `failed` could not be loaded, newest first:
   * the older snapshots down to `floor` (the base below every snapshot) and `floor` itself, keeping
   * those whose changelogs up to `version` all exist and number at most [[maxChangelogReplay]].
   */
  def fallbacks(version: Long, failed: Long, snapshots: Iterable[Long], floor: Long,
      hasChangelog: Long => Boolean): Seq[Long] =
    if (!enabled) Nil
    else {
      val older = snapshots.filter(s => s < failed && s > floor).toSeq.sorted.reverse :+ floor
      older.filter { base =>
        version - base <= maxChangelogReplay && (base + 1 to version).forall(hasChangelog)
      }
    }
}

object SnapshotRepair {

  /** Spark 4.3's defaults: on, after one failure, replaying at most 500 changelogs. */
  val SparkDefault: SnapshotRepair = SnapshotRepair(enabled = true, attemptsBeforeRepair = 1, maxChangelogReplay = 500)

  /** No repair: a snapshot that fails to load fails the load (Spark before 4.2). */
  val Off: SnapshotRepair = SnapshotRepair(enabled = false, attemptsBeforeRepair = 1, maxChangelogReplay = 0)
}
