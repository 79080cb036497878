package io.ttlstore.store.local

import io.ttlstore.checkpoint.{AdoptionRecord, LineageItem, Listing, VersionFile}
import io.ttlstore.legacy.LegacySource

/** Where a load starts building the version it was asked for. */
sealed trait LoadBase {

  /** The version the base holds; the changelogs after it are replayed. */
  def version: Long
}

object LoadBase {

  /** The local copy already holds `version` of the same lineage: nothing is restored. */
  final case class Held(version: Long) extends LoadBase

  /** A fresh, empty DB taken as committed `version` (0, or any version for Spark's `loadEmpty`). */
  final case class Empty(version: Long) extends LoadBase

  /** A fresh DB restored from a snapshot. */
  final case class Snapshot(file: VersionFile) extends LoadBase {
    def version: Long = file.version
  }

  /** A fresh DB holding the state of Spark's provider that the store adopted at `record.version`. */
  final case class Adopted(record: AdoptionRecord, source: LegacySource) extends LoadBase {
    def version: Long = record.version
  }
}

/**
 * One way to build a version: a base, then the changelogs after it, oldest first, each with the
 * checkpoint id it was committed under. `lineage` is what checkpoint format v2 knows of the built
 * version (its lineage from the base on); None in format v1.
 */
final case class Route(base: LoadBase, changelogs: Vector[VersionFile], lineage: Option[Vector[LineageItem]]) {

  /** Whether the route restores a snapshot (the only base that can fail as damaged and be repaired around). */
  def snapshot: Option[VersionFile] = base match {
    case LoadBase.Snapshot(f) => Some(f)
    case _ => None
  }
}

object Route {

  /** Format v1: `base`, then the changelog of every version after it up to `version`. */
  def byVersion(base: LoadBase, version: Long): Route =
    Route(base, (base.version + 1 to version).map(VersionFile(_, None)).toVector, None)

  /** Format v2: `base`, then the versions of `lineage` after it (the lineage from the base on). */
  def byLineage(base: LoadBase, lineage: Vector[LineageItem]): Route =
    Route(base, lineage.filter(_.version > base.version).map(i => VersionFile(i.version, Some(i.id))),
      Some(lineage))
}

/**
 * An older route to try once the planned route's snapshot failed to load: its base version, and how its
 * route is found.
 */
final case class Fallback(base: Long, route: Fallback.RouteTo)

object Fallback {

  /** How a fallback's route is found. */
  sealed trait RouteTo

  /** Format v1: the route is known when the plan is made. */
  final case class Known(route: Route) extends RouteTo

  /**
   * Format v2: the route of `end` from a snapshot of version `base` on its lineage (one of `snapshots`, or the
   * empty state at 0). A changelog records its lineage back to its own base only, so the lineage is walked back
   * through the changelogs' records, which the load reads only if it comes to this fallback.
   */
  final case class AlongLineage(end: LineageItem, snapshots: Seq[VersionFile]) extends RouteTo
}

/**
 * What a build may do should its snapshot fail to load: the older routes Spark's snapshot repair allows (see
 * [[io.ttlstore.config.SnapshotRepair]]), newest first, and whether an older base exists at all (if none does, the
 * snapshot's own error is the load's).
 */
final case class Repair(fallbacks: Seq[Fallback], anyOlder: Boolean)

object Repair {

  /** Nothing to fall back to: the route restores no snapshot, or none is older. */
  val Nothing: Repair = Repair(Nil, anyOlder = false)
}

/**
 * What a load does, decided before the local copy is touched: [[VersionLoads]] plans, and [[LocalCopy.load]]
 * carries the plan out in one place, step by step as the plan names them.
 */
sealed trait LoadPlan

object LoadPlan {

  /** The local copy already holds the version asked for: it is opened again as it is. */
  case object Reuse extends LoadPlan

  /**
   * Build `version` by `route`, falling back as `repair` says should its snapshot fail to load. `nextVersion` holds
   * the changelogs of the version after `version` that the plan's listing found (earlier attempts of the next
   * batch).
   */
  final case class Build(version: Long, route: Route, repair: Repair, nextVersion: Seq[VersionFile]) extends LoadPlan

  /** A build with no snapshot to repair around. */
  def build(version: Long, route: Route, nextVersion: Seq[VersionFile]): Build =
    Build(version, route, Repair.Nothing, nextVersion)
}

/**
 * A plan and the checkpoint listing it was made from (None: it needed none), so that a load that fails after a
 * cleanup changed the checkpoint can tell and plan again.
 */
final case class Planned(plan: LoadPlan, listing: Option[Listing])
