package io.ttlstore.store.local

import scala.util.control.NonFatal

import io.ttlstore.checkpoint.{CheckpointFiles, Lineage, LineageItem, Listing, VersionFile}
import io.ttlstore.errors.{TtlStoreErrors, TtlStoreException}

/**
 * Checkpoint format v2 over one store's checkpoint files: which attempt's files rebuild a version,
 * read from the lineages its changelogs record ([[Lineage]] decides, this reads), with the errors
 * that name what is missing.
 */
final class LineageFiles(files: CheckpointFiles) {
  private def dir = files.root.toString

  /**
   * How (version, id) is rebuilt: the snapshot to start from (None: the empty state) and the
   * lineage from that base to the version, each item the attempt whose changelog to replay.
   */
  def plan(version: Long, id: Option[String], listing: Listing): (Option[LineageItem], Vector[LineageItem]) = {
    val target = LineageItem(version, id.getOrElse(throw idMissing(version)))
    val recorded =
      if (listing.hasSnapshot(version, id)) Nil
      else if (listing.hasChangelog(version, id)) files.lineageOf(version, target.id)
      else if (!listing.hasCheckpointIds && listing.latest.isDefined) {
        throw TtlStoreErrors.checkpointFormatMismatch(dir, version)
      } else {
        throw TtlStoreErrors.versionNotFound(dir, version, listing.latest,
          Some(files.changelogPath(VersionFile(version, id)).toString))
      }
    Lineage.fromBase(recorded, target, i => listing.hasSnapshot(i.version, Some(i.id)))
      .fold(why => throw broken(target, why), identity)
  }

  /**
   * The versions from `start` to `end` as `end`'s lineage says, walking back through the lineage
   * each changelog records (it starts at that changelog's base).
   */
  def between(start: VersionFile, end: LineageItem): Vector[LineageItem] = {
    val walked =
      Lineage.walkBack(start.version, end, i => files.lineageOf(i.version, i.id)).fold(why => throw broken(end, why),
        identity)
    if (start.id.exists(id => walked.headOption.exists(_.id != id))) {
      throw broken(end, s"its lineage passes version ${start.version} as ${walked.head}, not as ${start.stem}")
    }
    walked
  }

  /**
   * The versions of a change feed from `start` to `end`: under format v2 those of `end`'s lineage,
   * which its id names (a store in format v2 asked without one is refused).
   */
  def feedVersions(start: Long, end: Long, endId: Option[String]): Seq[VersionFile] = endId match {
    case None =>
      if (files.listing().hasCheckpointIds) throw idMissing(end)
      (start to end).map(VersionFile(_, None))
    case Some(id) =>
      between(VersionFile(start, None), LineageItem(end, id)).map(i => VersionFile(i.version, Some(i.id)))
  }

  /** True when `file` (a changelog) was written on `base`: in format v2 its lineage ends there. */
  def builtOn(file: VersionFile, base: Option[LineageItem]): Boolean =
    file.id match {
      case None => base.isEmpty
      case Some(id) =>
        try files.lineageOf(file.version, id).lastOption == base
        catch { case NonFatal(_) => false }
    }

  /** A version of a store in format v2 asked for without its checkpoint id. */
  def idMissing(version: Long): TtlStoreException =
    TtlStoreErrors.checkpointIdMissing(dir, version, org.apache.spark.SPARK_VERSION)

  private[store] def broken(item: LineageItem, why: String): TtlStoreException =
    TtlStoreErrors.checkpointLineageBroken(dir, item.version, Some(item.id), why)
}
