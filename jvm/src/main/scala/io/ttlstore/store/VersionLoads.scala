package io.ttlstore.store

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.ttlstore.checkpoint.{AdoptionRecord, CheckpointFiles, LineageItem, Listing, VersionChain, VersionFile}
import io.ttlstore.config.SnapshotRepair
import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.legacy.LegacySource

/** What a load does to a local copy ([[LocalStore]] is the one). */
private[store] trait LoadTarget {

  /** The committed version the copy holds, or -1; only meaningful while `isOpen`. */
  def version: Long
  def isOpen: Boolean

  /** Opens a fresh DB from the snapshot (None: empty); the copy then holds nothing trustworthy. */
  def restore(snapshot: Option[VersionFile]): Unit

  /** Replays the changelogs after `from` up to `version`, each by the id `idOf` gives; returns how many. */
  def replayUpTo(from: Long, version: Long, idOf: Long => Option[String]): Int

  /** Loads the adopted state of Spark's provider into the freshly restored, empty DB. */
  def adopt(record: AdoptionRecord, source: LegacySource): Unit

  /** The freshly restored, empty DB is taken as committed `version` (Spark's `loadEmpty`). */
  def emptyAt(version: Long): Unit

  /** The DB is about to change other than through the stores' recorded puts and removes. */
  def forgetKnownKeys(): Unit
}

/**
 * How a local copy comes to hold the version a load asks for: which snapshot to restore (or the
 * empty state, or the adopted state of Spark's provider), which changelogs to replay and, under
 * checkpoint format v2, under which checkpoint ids; and when the copy it holds already serves.
 *
 * Format v1: the newest snapshot at or below v, then the changelogs after it ([[VersionChain]]); a
 * snapshot that fails to load is repaired around as Spark's settings ask ([[SnapshotRepair]]).
 * Format v2: the lineage of (v, id) back to the newest snapshot in it ([[LineageFiles]]); a copy
 * that holds another attempt's version is restored, never replayed onto.
 */
private[store] final class VersionLoads(files: CheckpointFiles, adoptions: Adoptions, ids: CheckpointIds,
    target: LoadTarget, repair: SnapshotRepair) extends Logging {
  private val lineages = new LineageFiles(files)

  /** How many loads were repaired around a snapshot that failed to load, since the previous call. */
  private var repaired = 0

  def takeRepaired(): Int = {
    val n = repaired
    repaired = 0
    n
  }

  /** The changelogs of the version after the loaded one that the last load found (earlier attempts). */
  private var nextVersionFiles = Seq.empty[VersionFile]

  def load(version: Long, loadEmpty: Boolean, checkpointId: Option[String], withIds: Boolean): Int =
    if (withIds) loadWithId(version, checkpointId, loadEmpty)
    else {
      ids.clear()
      loadWithoutId(version, loadEmpty)
    }

  private def loadWithoutId(version: Long, loadEmpty: Boolean): Int = {
    if (target.isOpen && version == target.version && !loadEmpty) return 0
    nextVersionFiles = Nil
    target.forgetKnownKeys()
    if (loadEmpty) {
      target.restore(None)
      target.emptyAt(version)
      0
    } else {
      val listing = files.listing()
      nextVersionFiles = listing.changelogFiles.filter(_.version == version + 1).toSeq
      val adopted = adoptions.baseFor(version, listing)
      if (version > 0 && adopted.isEmpty && !listing.hasChangelog(version, None) &&
        !listing.hasSnapshot(version, None)) {
        if (listing.hasCheckpointIds) throw lineages.idMissing(version)
        throw TtlStoreErrors.versionNotFound(files.root.toString, version, listing.latest,
          Some(files.changelogPath(version).toString))
      }
      // The base: the newest own snapshot, unless the adopted version of Spark's state is newer.
      val snapshot =
        VersionChain.of(version, listing.snapshotsWithoutIds).snapshot.filter(s => adopted.forall(_._1.version < s))
      val base = snapshot.orElse(adopted.map(_._1.version)).getOrElse(0L)
      val from =
        if (target.isOpen && target.version >= base && target.version < version) target.version
        else restoreBase(version, snapshot, adopted, listing)
      target.replayUpTo(from, version, _ => None)
    }
  }

  /**
   * Restores the base of `version`: `snapshot`, or below every snapshot the adopted state or the
   * empty one; returns its version. A snapshot that fails [[SnapshotRepair.attemptsBeforeRepair]]
   * times is given up for the older bases [[SnapshotRepair.fallbacks]] allows, newest first.
   */
  private def restoreBase(version: Long, snapshot: Option[Long], adopted: Option[(AdoptionRecord, LegacySource)],
      listing: Listing): Long = {
    val floor = adopted.map(_._1.version).getOrElse(0L)
    def restoreAt(base: Long): Long = {
      if (base > floor) target.restore(Some(VersionFile(base, None)))
      else {
        target.restore(None)
        adopted.foreach { case (record, source) => target.adopt(record, source) }
      }
      base
    }
    snapshot match {
      case None => restoreAt(floor)
      case Some(s) =>
        var failure: Throwable = null
        var attempt = 0
        while (attempt < math.max(1, repair.attemptsBeforeRepair)) {
          attempt += 1
          try return restoreAt(s)
          catch { case NonFatal(e) => failure = e }
        }
        if (!repair.enabled) throw failure
        def fallbacks(r: SnapshotRepair) =
          r.fallbacks(version, s, listing.snapshotsWithoutIds, floor, v => listing.hasChangelog(v, None))
        val bases = fallbacks(repair)
        // Nothing older to build from at all: the snapshot's own error names what to restore.
        if (bases.isEmpty && fallbacks(repair.copy(maxChangelogReplay = Int.MaxValue)).isEmpty) throw failure
        bases.iterator.map(base => Try(restoreAt(base)).toOption).collectFirst { case Some(base) => base } match {
          case Some(base) =>
            repaired += 1
            logWarning(s"The snapshot of version $s (${files.snapshotPath(s, None)}) failed to load; built " +
              s"version $version from ${if (base == 0) "the empty state" else s"version $base"} and the " +
              s"changelogs after it instead (autoSnapshotRepair): ${failure.getMessage}")
            base
          case None =>
            throw TtlStoreErrors.snapshotRepairFailed(files.snapshotPath(s, None).toString, version, s, bases,
              repair.maxChangelogReplay, failure)
        }
    }
  }

  private def loadWithId(version: Long, checkpointId: Option[String], loadEmpty: Boolean): Int = {
    if (loadEmpty) {
      throw TtlStoreErrors.unsupportedOperation("loading an empty store under checkpoint format v2",
        "set spark.sql.streaming.stateStore.checkpointFormatVersion to 1 for this job.")
    }
    if (target.isOpen && ids.holds(version, checkpointId, target.version)) {
      ids.reopened()
      return 0
    }
    nextVersionFiles = Nil
    target.forgetKnownKeys()
    if (version == 0) {
      if (checkpointId.isDefined) {
        throw TtlStoreErrors.checkpointLineageBroken(files.root.toString, 0, checkpointId,
          "version 0 is the empty state and has no checkpoint id")
      }
      target.restore(None)
      val replayed = target.replayUpTo(0, 0, _ => None)
      ids.loadedAt(Vector.empty)
      return replayed
    }
    val listing = files.listing()
    nextVersionFiles = listing.changelogFiles.filter(_.version == version + 1).toSeq
    val (base, fromBase) = lineages.plan(version, checkpointId, listing)
    val baseVersion = base.fold(0L)(_.version)
    // The copy may hold a version of this lineage at or after its base: replay only what follows.
    val held = target.isOpen && target.version >= baseVersion &&
      fromBase.exists(i => ids.holds(i.version, Some(i.id), target.version))
    val from =
      if (held) target.version
      else {
        target.restore(base.map(b => VersionFile(b.version, Some(b.id))))
        baseVersion
      }
    val idOf = fromBase.map(i => i.version -> i.id).toMap
    val replayed = target.replayUpTo(from, version, v => idOf.get(v))
    ids.loadedAt(fromBase)
    replayed
  }

  /**
   * `endVersion` built from the snapshot of `snapshotVersion` and the changelogs after it, whatever
   * else exists (Spark's state reader with `snapshotStartBatchId`); under format v2 the snapshot
   * and changelogs of the lineage of `endId`.
   */
  def fromSnapshot(snapshotVersion: Long, endVersion: Long, snapshotId: Option[String], endId: Option[String]): Int = {
    val listing = files.listing()
    if (!listing.hasSnapshot(snapshotVersion, snapshotId)) {
      throw TtlStoreErrors.snapshotNotFound(files.root.toString, snapshotVersion,
        listing.snapshotFiles.filter(_.id.isDefined == snapshotId.isDefined).toSeq.map(_.version))
    }
    if (endVersion < snapshotVersion) {
      throw TtlStoreErrors.versionNotFound(files.root.toString, endVersion, listing.latest)
    }
    val idOf = endId match {
      case None => (_: Long) => None
      case Some(end) =>
        val byVersion = lineages.between(VersionFile(snapshotVersion, snapshotId), LineageItem(endVersion, end))
          .map(i => i.version -> i.id).toMap
        (v: Long) => byVersion.get(v)
    }
    nextVersionFiles = Nil
    target.forgetKnownKeys()
    target.restore(Some(VersionFile(snapshotVersion, snapshotId)))
    target.replayUpTo(snapshotVersion, endVersion, idOf)
  }

  /**
   * The changelogs of `version + 1` that earlier attempts committed on the held `version`, as the
   * last load listed them (under format v2 those whose lineage ends at the held version).
   */
  def earlierAttempts(version: Long): Iterator[VersionFile] = {
    val held = ids.loaded.map(LineageItem(version, _))
    nextVersionFiles.iterator.filter(f => f.version == version + 1 && lineages.builtOn(f, held))
  }

  /** A commit moved the copy on: what the last load listed is about older versions. */
  def committed(): Unit = nextVersionFiles = Nil
}
