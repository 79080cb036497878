package io.ttlstore.store.local

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.ttlstore.config.SnapshotRepair
import io.ttlstore.errors.{DiskFull, FileSystemFailure, TtlStoreErrors}

/**
 * Restores the base of a [[LoadPlan.Build]]: its route's, or, once that route's snapshot failed to load
 * [[SnapshotRepair.attemptsBeforeRepair]] times, the base of the first of the plan's older routes that
 * restores, newest first (Spark's `autoSnapshotRepair`).
 */
private[store] object BaseRestore extends Logging {

  /** The route whose base was restored; `repaired`: another than the planned one, whose snapshot failed. */
  final case class Restored(route: Route, repaired: Boolean)

  /**
   * Runs `restore` on the plan's route, then on its fallbacks as `repair` allows; `snapshotPath` names
   * the planned snapshot's file in the error when no route restores.
   */
  def run(plan: LoadPlan.Build, repair: SnapshotRepair, snapshotPath: String)(restore: Route => Unit): Restored = {
    // Only a snapshot is tried again and repaired around.
    if (plan.route.snapshot.isEmpty) {
      restore(plan.route)
      return Restored(plan.route, repaired = false)
    }
    var failure: Throwable = null
    var attempt = 0
    while (attempt < math.max(1, repair.attemptsBeforeRepair)) {
      attempt += 1
      try {
        restore(plan.route)
        return Restored(plan.route, repaired = false)
      } catch { case NonFatal(e) => failure = e }
    }
    // A full local disk or a file system that does not answer is no damage of the snapshot's: no older
    // base would load either.
    if (!repair.enabled || DiskFull.in(failure) || FileSystemFailure.in(failure)) throw failure
    val fallbacks = plan.fallbacks()
    // Nothing older to build from at all: the snapshot's own error names what to restore.
    if (fallbacks.isEmpty && !plan.anyOlder()) throw failure
    val built = fallbacks.iterator.map(f => Try { val r = f.route(); restore(r); r }.toOption)
      .collectFirst { case Some(route) => route }
    built match {
      case Some(route) =>
        val base = route.base.version
        logWarning(s"The snapshot of version ${plan.route.base.version} ($snapshotPath) failed to load; built " +
          s"version ${plan.version} from ${if (base == 0) "the empty state" else s"version $base"} and the " +
          s"changelogs after it instead (autoSnapshotRepair): ${failure.getMessage}")
        Restored(route, repaired = true)
      case None =>
        throw TtlStoreErrors.snapshotRepairFailed(snapshotPath, plan.version, plan.route.base.version,
          fallbacks.map(_.base), repair.maxChangelogReplay, failure)
    }
  }
}
