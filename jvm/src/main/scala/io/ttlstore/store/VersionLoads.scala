package io.ttlstore.store

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.ttlstore.checkpoint.{AdoptionRecord, CheckpointFiles, LineageItem, Listing, VersionChain, VersionFile}
import io.ttlstore.config.SnapshotRepair
import io.ttlstore.errors.{DiskFull, FileSystemFailure, TtlStoreErrors}
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

  /** The listing the running load planned from. */
  private var listed: Option[Listing] = None

  /**
   * Loads `version`; once more from a new listing if the load failed after the checkpoint changed
   * under it. Another instance of the store (a stopped query's, still loaded, or another executor's)
   * may upload a newer snapshot and delete the files older than it between this load's listing and
   * its replay: everything retained still loads, from that snapshot.
   */
  def load(version: Long, loadEmpty: Boolean, checkpointId: Option[String], withIds: Boolean): Int = {
    def attempt(): Int =
      if (withIds) loadWithId(version, checkpointId, loadEmpty)
      else {
        ids.clear()
        loadWithoutId(version, loadEmpty)
      }
    listed = None
    try attempt()
    catch {
      case NonFatal(e) if listed.exists(changedSince(_, e)) =>
        logInfo(s"The checkpoint ${files.root} changed while version $version loaded (files it listed were " +
          s"deleted by a cleanup); loading again from a new listing: ${e.getMessage}")
        attempt()
    }
  }

  /**
   * Whether a cleanup since `before` explains `failure`: never a full disk or a file system that did not
   * answer, and a relist that fails leaves `failure` (which names its file) the load's error.
   */
  private def changedSince(before: Listing, failure: Throwable): Boolean =
    !DiskFull.in(failure) && !FileSystemFailure.in(failure) &&
      (try {
        val now = files.listing()
        now.snapshotFiles != before.snapshotFiles || now.changelogFiles != before.changelogFiles
      } catch { case NonFatal(relist) => failure.addSuppressed(relist); false })

  private def listing(): Listing = {
    val l = files.listing()
    listed = Some(l)
    l
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
      val listing = this.listing()
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
   * empty one; returns its version.
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
        val older = (r: SnapshotRepair) =>
          r.fallbacks(version, s, listing.snapshotsWithoutIds, floor, v => listing.hasChangelog(v, None))
        repairing(version, VersionFile(s, None), older)(restoreAt)
    }
  }

  /**
   * `restore(snapshot)`, or, once it failed [[SnapshotRepair.attemptsBeforeRepair]] times, `restore`
   * of the first of the older bases `older` lists that loads, newest first ([[SnapshotRepair]]).
   */
  private def repairing[T](version: Long, snapshot: VersionFile, older: SnapshotRepair => Seq[Long])(
      restore: Long => T): T = {
    var failure: Throwable = null
    var attempt = 0
    while (attempt < math.max(1, repair.attemptsBeforeRepair)) {
      attempt += 1
      try return restore(snapshot.version)
      catch { case NonFatal(e) => failure = e }
    }
    // A full local disk or a file system that does not answer is no damage of the snapshot's: no
    // older base would load either.
    if (!repair.enabled || DiskFull.in(failure) || FileSystemFailure.in(failure)) throw failure
    val bases = older(repair)
    // Nothing older to build from at all: the snapshot's own error names what to restore.
    if (bases.isEmpty && older(repair.copy(maxChangelogReplay = Int.MaxValue)).isEmpty) throw failure
    val path = files.snapshotPath(snapshot.version, snapshot.id)
    bases.iterator.map(b => Try(b -> restore(b)).toOption).collectFirst { case Some(built) => built } match {
      case Some((base, built)) =>
        repaired += 1
        logWarning(s"The snapshot of version ${snapshot.version} ($path) failed to load; built version $version " +
          s"from ${if (base == 0) "the empty state" else s"version $base"} and the changelogs after it instead " +
          s"(autoSnapshotRepair): ${failure.getMessage}")
        built
      case None =>
        throw TtlStoreErrors.snapshotRepairFailed(path.toString, version, snapshot.version, bases,
          repair.maxChangelogReplay, failure)
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
    val listing = this.listing()
    nextVersionFiles = listing.changelogFiles.filter(_.version == version + 1).toSeq
    val (base, fromBase) = lineages.plan(version, checkpointId, listing)
    val baseVersion = base.fold(0L)(_.version)
    // The copy may hold a version of this lineage at or after its base: replay only what follows.
    val held = target.isOpen && target.version >= baseVersion &&
      fromBase.exists(i => ids.holds(i.version, Some(i.id), target.version))
    val (from, lineage) =
      if (held) (target.version, fromBase)
      else base.fold { target.restore(None); (0L, fromBase) }(b => restoreWithIds(version, b, fromBase, listing))
    val idOf = lineage.map(i => i.version -> i.id).toMap
    val replayed = target.replayUpTo(from, version, v => idOf.get(v))
    ids.loadedAt(lineage)
    replayed
  }

  /**
   * Restores snapshot `base` of (version, id)'s lineage `fromBase`; returns where replay starts and the
   * lineage from there. Repaired around as in format v1, with an older snapshot of the same lineage
   * (a changelog records its lineage back to its own base only, so the lineage is walked back through
   * the changelogs' records) or the empty state.
   */
  private def restoreWithIds(version: Long, base: LineageItem, fromBase: Vector[LineageItem], listing: Listing)
      : (Long, Vector[LineageItem]) = {
    val end = fromBase.last
    val older = (r: SnapshotRepair) =>
      r.fallbacks(version, base.version, listing.snapshotFiles.filter(_.id.isDefined).map(_.version), 0L,
        v => listing.changelogFiles.exists(_.version == v))
    repairing(version, VersionFile(base.version, Some(base.id)), older) { v =>
      if (v == base.version) {
        target.restore(Some(VersionFile(v, Some(base.id))))
        (v, fromBase)
      } else if (v == 0) {
        val walked = lineages.between(VersionFile(1L, None), end)
        target.restore(None)
        (0L, walked)
      } else {
        val onLineage = listing.snapshotFiles.iterator.filter(f => f.version == v && f.id.isDefined)
          .map(f => Try(f -> lineages.between(f, end)).toOption).collectFirst { case Some(found) => found }
        val (snapshot, walked) = onLineage.getOrElse(throw lineages.broken(end, s"no snapshot of version $v is in it"))
        target.restore(Some(snapshot))
        (v, walked)
      }
    }
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
