package io.ttlstore.store

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
    val target = LineageItem(version, id.getOrElse(throw formatMismatch(version, listing, idsAsked = true)))
    val recorded =
      if (listing.hasSnapshot(version, id)) Nil
      else if (listing.hasChangelog(version, id)) files.lineageOf(version, target.id)
      else if (!listing.hasCheckpointIds && listing.latest.isDefined) {
        throw formatMismatch(version, listing, idsAsked = true)
      } else {
        throw TtlStoreErrors.versionNotFound(dir, version, listing.latest,
          Some(files.changelogPath(version, id).toString))
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

  /** True when `file` (a changelog) was written on `base`: in format v2 its lineage ends there. */
  def builtOn(file: VersionFile, base: Option[LineageItem]): Boolean =
    file.id match {
      case None => base.isEmpty
      case Some(id) =>
        try files.lineageOf(file.version, id).lastOption == base
        catch { case NonFatal(_) => false }
    }

  /** A load that asks for checkpoint ids where the store has none, or the other way round. */
  def formatMismatch(version: Long, listing: Listing, idsAsked: Boolean): TtlStoreException =
    TtlStoreErrors.checkpointFormatMismatch(dir, version, written = if (listing.hasCheckpointIds) 2 else 1,
      asked = if (idsAsked) 2 else 1)

  private def broken(item: LineageItem, why: String): TtlStoreException =
    TtlStoreErrors.checkpointLineageBroken(dir, item.version, Some(item.id), why)
}
