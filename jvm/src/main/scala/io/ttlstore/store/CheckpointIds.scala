package io.ttlstore.store

import java.util.UUID

import io.ttlstore.checkpoint.{Lineage, LineageItem, VersionFile}

/**
 * Under checkpoint format v2, what a store's local copy knows about checkpoint ids: the id of the
 * version it holds, the id the version being written will commit under (new for every load, as in
 * Spark's RocksDB provider, so two attempts of a batch never write the same files), and the lineage
 * from the base the held version was built on to it. In format v1 all of it is empty.
 */
final class CheckpointIds {
  private var loadedId: Option[String] = None
  private var sessionId: Option[String] = None
  private var held = Vector.empty[LineageItem]

  /** The checkpoint id of the version the local copy holds. */
  def loaded: Option[String] = loadedId

  /** The checkpoint id the next commit writes under (None in format v1). */
  def session: Option[String] = sessionId

  /** The lineage of the held version, base first, the held version last (empty at version 0). */
  def lineage: Vector[LineageItem] = held

  /** True when the local copy holds `version` under `id`. */
  def holds(version: Long, id: Option[String], loadedVersion: Long): Boolean =
    version == loadedVersion && id == loadedId

  /** The local copy now holds the last item of `lineage` (or version 0: empty); the next commit gets a new id. */
  def loadedAt(lineage: Vector[LineageItem]): Unit = {
    held = lineage
    loadedId = lineage.lastOption.map(_.id)
    sessionId = Some(UUID.randomUUID().toString)
  }

  /** The same version is opened again: its next commit gets a new id. */
  def reopened(): Unit = if (sessionId.isDefined) sessionId = Some(UUID.randomUUID().toString)

  /** The session's version was committed: the local copy holds it. */
  def committed(version: Long): Unit = sessionId.foreach { id =>
    held = held :+ LineageItem(version, id)
    loadedId = Some(id)
  }

  /**
   * The lineage the changelog written on the held version records: from the newest snapshot in it
   * that is uploaded, so that lineages stay short.
   */
  def lineageToRecord(uploaded: Option[VersionFile]): Vector[LineageItem] = {
    uploaded.flatMap(f => f.id.map(LineageItem(f.version, _))).foreach(s => held = Lineage.from(held, s))
    held
  }

  /** Format v1, or the held version is no longer trusted. */
  def clear(): Unit = {
    loadedId = None
    sessionId = None
    held = Vector.empty
  }
}
