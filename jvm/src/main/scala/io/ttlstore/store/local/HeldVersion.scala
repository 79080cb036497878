package io.ttlstore.store.local

import java.util.UUID

import io.ttlstore.checkpoint.{Lineage, LineageItem, VersionFile}

/**
 * The committed version a store's local copy holds, as loads and commits leave it: its number (-1
 * while the copy holds nothing trustworthy) and, under checkpoint format v2, its checkpoint id, the
 * lineage from the base it was built on, and the id the version being written will commit under (new
 * for every load, as in Spark's RocksDB provider, so two attempts of a batch never write the same
 * files). In format v1 the ids are empty.
 */
final class HeldVersion {
  private var number = -1L
  private var loadedId: Option[String] = None
  private var sessionId: Option[String] = None
  private var held = Vector.empty[LineageItem]
  private var next = Seq.empty[VersionFile]

  /** The version held, or -1. */
  def version: Long = number

  /** The version held with its checkpoint id; None when the copy holds nothing trustworthy. */
  def file: Option[VersionFile] = if (number >= 0) Some(VersionFile(number, loadedId)) else None

  /** The checkpoint id of the version held. */
  def loaded: Option[String] = loadedId

  /** The checkpoint id the next commit writes under (None in format v1). */
  def session: Option[String] = sessionId

  /** The changelogs of the version after the held one that the load's listing found (earlier attempts). */
  def nextVersionFiles: Seq[VersionFile] = next

  /**
   * A load built `version`: by checkpoint id with `lineage` (base first, the version last; empty at
   * version 0), the next commit then getting a new id; None by version. `nextFiles`: see [[nextVersionFiles]].
   */
  def built(version: Long, lineage: Option[Vector[LineageItem]], nextFiles: Seq[VersionFile]): Unit = {
    number = version
    held = lineage.getOrElse(Vector.empty)
    loadedId = held.lastOption.map(_.id)
    sessionId = lineage.map(_ => UUID.randomUUID().toString)
    next = nextFiles
  }

  /** The same version is opened again: its next commit gets a new id. */
  def reopened(): Unit = if (sessionId.isDefined) sessionId = Some(UUID.randomUUID().toString)

  /** The session's version was committed: the local copy holds it. */
  def committed(version: Long): Unit = {
    number = version
    next = Nil
    sessionId.foreach { id =>
      held = held :+ LineageItem(version, id)
      loadedId = Some(id)
    }
  }

  /**
   * The lineage the changelog written on the held version records: from the newest snapshot in it
   * that is uploaded, so that lineages stay short.
   */
  def lineageToRecord(uploaded: Option[VersionFile]): Vector[LineageItem] = {
    uploaded.flatMap(f => f.id.map(LineageItem(f.version, _))).foreach(s => held = Lineage.from(held, s))
    held
  }

  /** The copy holds nothing trustworthy (changes not committed, a restore under way, closed). */
  def forget(): Unit = {
    number = -1L
    loadedId = None
    sessionId = None
    held = Vector.empty
    next = Nil
  }
}
