package io.ttlstore.checkpoint

/**
 * Which checkpoint files a store may delete. Pure: it sees a listing, decides, and does no I/O.
 *
 * Spark's `minBatchesToRetain` means: the latest `n` versions must stay loadable. Loading a version
 * needs the newest snapshot at or below it and every changelog after that snapshot. So the oldest
 * version to keep, `latest - n + 1`, fixes a base snapshot (or the empty state, version 0), and
 * everything strictly older than that base can go. The base's own changelog is kept: it is small,
 * and it lets the change feed start at the base.
 *
 * Under checkpoint format v2 the oldest kept version may have several files (one per attempt that
 * committed it), and each loads from the newest snapshot in its own lineage ([[Lineage]]), which
 * may be older than the newest snapshot of any attempt. The base is then the oldest of those, so
 * whichever attempt Spark's commit log names stays loadable; files of a version go together, every
 * attempt's at once.
 */
object Retention {

  final case class Plan(
      keepFrom: Long,
      baseSnapshot: Long,
      deleteChangelogs: Seq[Long],
      deleteSnapshots: Seq[Long])

  /**
   * `lineageBase`: under format v2, the version a changelog's lineage loads from (its newest existing
   * snapshot, or 0), as the caller read it from the file.
   */
  def plan(listing: Listing, minVersionsToRetain: Int, lineageBase: VersionFile => Long = _ => 0L): Option[Plan] =
    listing.latest.map { latest =>
      val keepFrom = math.max(1L, latest - math.max(minVersionsToRetain, 1) + 1)
      val newest = VersionChain.of(keepFrom, listing.snapshots).base
      val attempts = listing.changelogFiles.filter(f => f.version == keepFrom && f.id.isDefined).toSeq
      val bases = attempts.map(f => if (listing.snapshotFiles(f)) keepFrom else lineageBase(f))
      val base = (newest +: bases).min
      Plan(
        keepFrom = keepFrom,
        baseSnapshot = base,
        deleteChangelogs = listing.changelogs.rangeImpl(None, Some(base)).toSeq,
        deleteSnapshots = listing.snapshots.rangeImpl(None, Some(base)).toSeq)
    }

  /**
   * At most `maxVersions` versions of `plan`'s deletions, the oldest ones (Spark's
   * `maxVersionsToDeletePerMaintenance`); the rest wait for the next cleanup. A cut plan keeps its
   * base, so what it still deletes is what the whole plan deletes first.
   */
  def limited(plan: Plan, maxVersions: Option[Int]): Plan = maxVersions match {
    case Some(n) =>
      val versions = (plan.deleteChangelogs ++ plan.deleteSnapshots).distinct.sorted.take(n).toSet
      plan.copy(deleteChangelogs = plan.deleteChangelogs.filter(versions),
        deleteSnapshots = plan.deleteSnapshots.filter(versions))
    case None => plan
  }

  /** Whether `cut` deletes all that `whole` does. */
  def complete(cut: Plan, whole: Plan): Boolean =
    cut.deleteChangelogs.size == whole.deleteChangelogs.size && cut.deleteSnapshots.size == whole.deleteSnapshots.size

  /**
   * True once the files of the Spark provider state a store adopted (at `adoptedVersion`) are needed
   * by no retained version: every retained version then builds on a ttlstore snapshot newer than it.
   */
  def adoptedFilesDeletable(plan: Plan, adoptedVersion: Option[Long]): Boolean =
    adoptedVersion.exists(a => plan.baseSnapshot > a)

  /**
   * Temporary files that killed writers left (they were never renamed into place): those written
   * for a version older than every retained one, which no writer still running can be writing.
   */
  def leftoverTemporaries(plan: Plan, temporary: Map[String, Long]): Seq[String] =
    temporary.collect { case (name, version) if version < plan.keepFrom => name }.toSeq.sorted

  /**
   * SST files to delete: those no retained snapshot references and that are older than the oldest
   * retained snapshot, so that the files of a snapshot being uploaded right now (whose manifest
   * does not exist yet) are never taken.
   */
  def orphanSsts(
      sstFiles: Seq[(String, Long)],
      referenced: Set[String],
      oldestRetainedSnapshotTime: Option[Long]): Seq[String] =
    oldestRetainedSnapshotTime match {
      case None => Nil
      case Some(cutoff) =>
        sstFiles.collect { case (name, mtime) if !referenced(name) && mtime < cutoff => name }
    }
  // A temporary file of an SST upload is never referenced, so the same rule takes it once it is
  // older than the oldest retained snapshot (an upload running now wrote it later).
}
