package io.ttlstore.store.local

import java.io.File
import java.util.concurrent.ConcurrentHashMap

import io.ttlstore.compat.CollectionConverters._

import org.apache.spark.internal.Logging

import io.ttlstore.checkpoint.SstFile

/**
 * The local disk budget of an executor's stores in remote mode (`remote.localCacheMB`). After a snapshot upload, the
 * least recently read local SST files whose copy is in the checkpoint are demoted ([[Member.demote]]) until the
 * stores keep at most the budget locally; files no snapshot has uploaded yet stay, so the budget is a target the
 * stores return to after each upload, not a bound at every instant. The room left, then and when a store opens, is
 * filled with the most recently read remote files ([[Member.promote]]): a store reopened after a restart or an
 * executor loss reads what its budget holds locally, not every block from the checkpoint.
 */
private[local] object LocalSstCache extends Logging {

  /** A store in remote mode ([[RemoteFiles]]). */
  trait Member {

    /** The store's local SST files (not those being brought down). */
    def localFiles: Seq[Local]

    /** The store's SST files read from the checkpoint now (not those being brought down). */
    def remoteFiles: Seq[Remote]

    /** The bytes of the store's files being brought down. */
    def promotingBytes: Long

    /** Reads `local` from its checkpoint copy from now on and deletes it; false if the store no longer has it. */
    def demote(local: Local): Boolean

    /** Starts bringing `remote` down; the store reads it locally once it is in place and checked. */
    def promote(remote: Remote): Unit
  }

  /** A local SST file of `store`: its size, its checkpoint copy (None: not uploaded yet), its last read's tick. */
  final case class Local(store: Member, file: File, bytes: Long, copy: Option[SstFile], lastRead: Long)

  /** A remote SST file of `store`: its local path, its checkpoint copy, its last read's tick (0: never read). */
  final case class Remote(store: Member, file: File, sst: SstFile, lastRead: Long)

  private val stores = ConcurrentHashMap.newKeySet[Member]()
  @volatile private var budgetBytes = Long.MaxValue

  /** Adds a store that opened in remote mode, and fills the room its budget leaves. */
  def register(store: Member, budget: Long): Unit = {
    budgetBytes = budget
    stores.add(store)
    fill()
  }

  def unregister(store: Member): Unit = { stores.remove(store); () }

  /** The files to demote, least recently read first, so that what stays local fits `budget` where it can. */
  def toDemote(local: Seq[Local], budget: Long): Seq[Local] = {
    val excess = local.map(_.bytes).sum - budget
    val candidates = local.filter(_.copy.isDefined).sortBy(_.lastRead)
    val freed = candidates.scanLeft(0L)(_ + _.bytes)
    candidates.zip(freed).takeWhile { case (_, before) => before < excess }.map(_._1)
  }

  /**
   * The remote files to bring down into the `room` left by the local ones: the most recently read first (a file
   * read last as recently as another, the smaller first), each that still fits.
   */
  def toPromote(remote: Seq[Remote], room: Long): Seq[Remote] =
    remote.sortBy(r => (-r.lastRead, r.sst.sizeBytes)).foldLeft((room, Vector.empty[Remote])) {
      case ((left, chosen), r) => if (r.sst.sizeBytes <= left) (left - r.sst.sizeBytes, chosen :+ r) else (left, chosen)
    }._2

  /** Demotes what [[toDemote]] picks over every registered store, then fills the room left; returns the bytes demoted. */
  def trim(): Long = synchronized {
    val members = stores.asScala.toSeq
    // A store closed meanwhile has nothing to demote.
    val local = members.flatMap(s => scala.util.Try(s.localFiles).getOrElse(Nil))
    val demoted = toDemote(local, budgetBytes).filter(f => f.store.demote(f)).map(_.bytes).sum
    val stay = local.map(_.bytes).sum - demoted
    if (demoted > 0) {
      logInfo(s"Remote mode: demoted $demoted bytes of SST files to their checkpoint copies " +
        s"($stay bytes stay local, budget $budgetBytes)")
    }
    fillRoom(members, stay)
    demoted
  }

  /** Starts bringing down what [[toPromote]] picks over every registered store; returns the bytes it started. */
  def fill(): Long = synchronized {
    val members = stores.asScala.toSeq
    fillRoom(members, members.map(s => scala.util.Try(s.localFiles.map(_.bytes).sum).getOrElse(0L)).sum)
  }

  /** [[fill]], the stores' local files (those being brought down left out) holding `localBytes`. */
  private def fillRoom(members: Seq[Member], localBytes: Long): Long = {
    // A store closed meanwhile has nothing to bring down.
    val held = localBytes + members.map(s => scala.util.Try(s.promotingBytes).getOrElse(0L)).sum
    val chosen = toPromote(members.flatMap(s => scala.util.Try(s.remoteFiles).getOrElse(Nil)), budgetBytes - held)
    chosen.foreach(r => scala.util.Try(r.store.promote(r)))
    val started = chosen.map(_.sst.sizeBytes).sum
    if (started > 0) logInfo(s"Remote mode: bringing $started bytes of SST files down ($held bytes local, budget " +
      s"$budgetBytes)")
    started
  }
}
