package io.ttlstore.store.local

import scala.util.Try
import scala.util.control.NonFatal

import io.ttlstore.checkpoint.{CheckpointFiles, LineageItem, Listing, VersionChain, VersionFile}
import io.ttlstore.config.SnapshotRepair
import io.ttlstore.errors.{DiskFull, FileSystemFailure, TtlStoreErrors}

/**
 * How a local copy comes to hold the version a load asks for, as a [[LoadPlan]]: which snapshot to
 * restore (or the empty state, or the adopted state of Spark's provider), which changelogs to replay
 * under which checkpoint ids, and when the copy it holds already serves, with the older routes snapshot
 * repair may take as data. It reads the checkpoint and decides; [[LocalCopy.load]] carries the plan out.
 *
 * By version (format v1): the newest snapshot at or below v, then the changelogs after it
 * ([[VersionChain]]). By checkpoint id (format v2): the lineage of (v, id) back to the newest snapshot
 * in it ([[LineageFiles]]); a copy that holds another attempt's version is restored, never replayed
 * onto. Either way a snapshot that fails to load is repaired around as Spark's settings ask
 * ([[SnapshotRepair]]).
 */
private[store] final class VersionLoads(files: CheckpointFiles, adoptions: Adoptions, format: CheckpointFormat,
    repair: SnapshotRepair) {
  private val lineages = new LineageFiles(files)

  /**
   * The plan that makes the local copy, which holds `held` (None: nothing trustworthy), hold `target`, with the
   * checkpoint listing it was made from (listed only if the plan needs it). `loadEmpty`: Spark's `loadEmpty`, the
   * empty state taken as `target`'s version.
   */
  def plan(target: VersionFile, loadEmpty: Boolean, held: Option[VersionFile]): Planned = {
    var listed: Option[Listing] = None
    val list = () => listed.getOrElse { val l = files.listing(); listed = Some(l); l }
    val plan = format match {
      case CheckpointFormat.ByVersion =>
        if (target.id.isDefined) throw TtlStoreErrors.checkpointFormatMismatch(files.root.toString, target.version)
        byVersion(target.version, loadEmpty, held.map(_.version), list)
      case CheckpointFormat.ByCheckpointId => byCheckpointId(target, loadEmpty, held, list)
    }
    Planned(plan, listed)
  }

  /**
   * Whether the checkpoint changed since `before` in a way that explains `failure`: another instance of the store
   * (a stopped query's, still loaded, or another executor's) may upload a newer snapshot and delete the files older
   * than it between a load's listing and its replay; everything retained still loads, planned from a new listing.
   * Never a full disk or a file system that did not answer; a relist that fails leaves `failure` (which names its
   * file) the load's error.
   */
  def changedSince(before: Listing, failure: Throwable): Boolean =
    !DiskFull.in(failure) && !FileSystemFailure.in(failure) &&
      (try {
        val now = files.listing()
        now.snapshotFiles != before.snapshotFiles || now.changelogFiles != before.changelogFiles
      } catch { case NonFatal(relist) => failure.addSuppressed(relist); false })

  /** The route of a fallback the plan named: known, or walked back along its lineage through the changelogs. */
  def route(fallback: Fallback): Route = fallback.route match {
    case Fallback.Known(route) => route
    case Fallback.AlongLineage(end, snapshots) => olderOnLineage(fallback.base, end, snapshots)
  }

  private def byVersion(version: Long, loadEmpty: Boolean, held: Option[Long], list: () => Listing): LoadPlan =
    if (held.contains(version) && !loadEmpty) LoadPlan.Reuse
    else if (loadEmpty) LoadPlan.build(version, Route.byVersion(LoadBase.Empty(version), version), Nil)
    else {
      val listing = list()
      val adopted = adoptions.baseFor(version, listing)
      if (version > 0 && adopted.isEmpty && !listing.hasChangelog(version, None) &&
        !listing.hasSnapshot(version, None)) {
        if (listing.hasCheckpointIds) throw lineages.idMissing(version)
        throw TtlStoreErrors.versionNotFound(files.root.toString, version, listing.latest,
          Some(files.changelogPath(VersionFile(version, None)).toString))
      }
      // The base: the newest own snapshot, unless the adopted version of Spark's state is newer.
      val floor = adopted.map(_._1.version).getOrElse(0L)
      val snapshot = VersionChain.of(version, listing.snapshotsWithoutIds).snapshot.filter(_ > floor)
      def baseAt(v: Long): LoadBase =
        if (v > floor) LoadBase.Snapshot(VersionFile(v, None))
        else adopted.fold[LoadBase](LoadBase.Empty(0L)) { case (record, source) => LoadBase.Adopted(record, source) }
      val next = listing.changelogFiles.filter(_.version == version + 1).toSeq
      val base = snapshot.getOrElse(floor)
      held.filter(h => h >= base && h < version) match {
        case Some(h) => LoadPlan.build(version, Route.byVersion(LoadBase.Held(h), version), next)
        case None =>
          val older = (r: SnapshotRepair) =>
            snapshot.toSeq.flatMap(s =>
              r.fallbacks(version, s, listing.snapshotsWithoutIds, floor, v => listing.hasChangelog(v, None)))
          val fallbacks = older(repair).map(b => Fallback(b, Fallback.Known(Route.byVersion(baseAt(b), version))))
          val anyOlder = older(repair.copy(maxChangelogReplay = Int.MaxValue)).nonEmpty
          LoadPlan.Build(version, Route.byVersion(baseAt(base), version), Repair(fallbacks, anyOlder), next)
      }
    }

  private def byCheckpointId(
      target: VersionFile, loadEmpty: Boolean, held: Option[VersionFile], list: () => Listing): LoadPlan = {
    val version = target.version
    if (loadEmpty) {
      throw TtlStoreErrors.unsupportedOperation("loading an empty store under checkpoint format v2",
        "set spark.sql.streaming.stateStore.checkpointFormatVersion to 1 for this job.")
    }
    if (held.contains(target)) LoadPlan.Reuse
    else if (version == 0) {
      if (target.id.isDefined) {
        throw TtlStoreErrors.checkpointLineageBroken(files.root.toString, 0, target.id,
          "version 0 is the empty state and has no checkpoint id")
      }
      LoadPlan.build(0L, Route.byLineage(LoadBase.Empty(0L), Vector.empty), Nil)
    } else {
      val listing = list()
      val next = listing.changelogFiles.filter(_.version == version + 1).toSeq
      val (base, fromBase) = lineages.plan(version, target.id, listing)
      val baseVersion = base.fold(0L)(_.version)
      // The copy may hold a version of this lineage at or after its base: replay only what follows.
      val heldOnLineage = held.filter(h =>
        h.version >= baseVersion && fromBase.exists(i => h.id.contains(i.id) && h.version == i.version))
      (heldOnLineage, base) match {
        case (Some(h), _) => LoadPlan.build(version, Route.byLineage(LoadBase.Held(h.version), fromBase), next)
        case (None, None) => LoadPlan.build(version, Route.byLineage(LoadBase.Empty(0L), fromBase), next)
        case (None, Some(b)) =>
          val snapshot = LoadBase.Snapshot(VersionFile(b.version, Some(b.id)))
          val older = (r: SnapshotRepair) =>
            r.fallbacks(version, b.version, listing.snapshotFiles.filter(_.id.isDefined).map(_.version), 0L,
              v => listing.changelogFiles.exists(_.version == v))
          val bases = older(repair)
          val onLineage = Fallback.AlongLineage(fromBase.last,
            listing.snapshotFiles.filter(f => f.id.isDefined && bases.contains(f.version)).toSeq)
          val fallbacks = bases.map(v => Fallback(v, onLineage))
          val anyOlder = older(repair.copy(maxChangelogReplay = Int.MaxValue)).nonEmpty
          LoadPlan.Build(version, Route.byLineage(snapshot, fromBase), Repair(fallbacks, anyOlder), next)
      }
    }
  }

  /**
   * The route of `end` from its lineage's older base `v` (one of `snapshots` of the same lineage, or the empty
   * state): a changelog records its lineage back to its own base only, so the lineage is walked back
   * through the changelogs' records.
   */
  private def olderOnLineage(v: Long, end: LineageItem, snapshots: Seq[VersionFile]): Route =
    if (v == 0) Route.byLineage(LoadBase.Empty(0L), lineages.between(VersionFile(1L, None), end))
    else {
      val onLineage = snapshots.iterator.filter(_.version == v)
        .map(f => Try(f -> lineages.between(f, end)).toOption).collectFirst { case Some(found) => found }
      val (snapshot, walked) = onLineage.getOrElse(throw lineages.broken(end, s"no snapshot of version $v is in it"))
      Route.byLineage(LoadBase.Snapshot(snapshot), walked)
    }

  /**
   * `endVersion` built from the snapshot of `snapshotVersion` and the changelogs after it, whatever
   * else exists (Spark's state reader with `snapshotStartBatchId`); by checkpoint id the snapshot and
   * changelogs of the lineage of `end`.
   */
  def fromSnapshot(snapshot: VersionFile, end: VersionFile): LoadPlan.Build = {
    val listing = files.listing()
    if (!listing.hasSnapshot(snapshot.version, snapshot.id)) {
      throw TtlStoreErrors.snapshotNotFound(files.root.toString, snapshot.version,
        listing.snapshotFiles.filter(_.id.isDefined == snapshot.id.isDefined).toSeq.map(_.version))
    }
    if (end.version < snapshot.version) {
      throw TtlStoreErrors.versionNotFound(files.root.toString, end.version, listing.latest)
    }
    val base = LoadBase.Snapshot(snapshot)
    val route = end.id match {
      case None => Route.byVersion(base, end.version)
      case Some(id) => Route.byLineage(base, lineages.between(snapshot, LineageItem(end.version, id)))
    }
    LoadPlan.build(end.version, route, Nil)
  }

  /**
   * Of the changelogs `next` (those of the version after the held one a plan found), the ones that
   * earlier attempts committed on `held` (by checkpoint id, those whose lineage ends there).
   */
  def builtOn(next: Seq[VersionFile], held: VersionFile): Iterator[VersionFile] = {
    val base = held.id.map(LineageItem(held.version, _))
    next.iterator.filter(f => f.version == held.version + 1 && lineages.builtOn(f, base))
  }
}
