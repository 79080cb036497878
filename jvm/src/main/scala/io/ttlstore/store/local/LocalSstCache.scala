package io.ttlstore.store.local

import java.io.File
import java.util.concurrent.ConcurrentHashMap

import io.ttlstore.compat.CollectionConverters._

import org.apache.spark.internal.Logging

import io.ttlstore.checkpoint.SstFile

/**
 * The local disk budget of an executor's stores in remote mode (`remote.localCacheMB`): after a snapshot upload, the
 * least recently read local SST files whose copy is in the checkpoint are demoted ([[Member.demote]]) until the
 * stores keep at most the budget locally. Files no snapshot has uploaded yet stay: the budget is a target the stores
 * return to after each upload, not a bound at every instant.
 */
private[local] object LocalSstCache extends Logging {

  /** A store in remote mode ([[RemoteFiles]]). */
  trait Member {

    /** The store's local SST files. */
    def localFiles: Seq[Local]

    /** Reads `local` from its checkpoint copy from now on and deletes it; false if the store no longer has it. */
    def demote(local: Local): Boolean
  }

  /** A local SST file of `store`: its size, its checkpoint copy (None: not uploaded yet), its last read's tick. */
  final case class Local(store: Member, file: File, bytes: Long, copy: Option[SstFile], lastRead: Long)

  private val stores = ConcurrentHashMap.newKeySet[Member]()
  @volatile private var budgetBytes = Long.MaxValue

  def register(store: Member, budget: Long): Unit = { budgetBytes = budget; stores.add(store); () }

  def unregister(store: Member): Unit = { stores.remove(store); () }

  /** The files to demote, least recently read first, so that what stays local fits `budget` where it can. */
  def toDemote(local: Seq[Local], budget: Long): Seq[Local] = {
    val excess = local.map(_.bytes).sum - budget
    val candidates = local.filter(_.copy.isDefined).sortBy(_.lastRead)
    val freed = candidates.scanLeft(0L)(_ + _.bytes)
    candidates.zip(freed).takeWhile { case (_, before) => before < excess }.map(_._1)
  }

  /** Demotes what [[toDemote]] picks over every registered store; returns the bytes demoted. */
  def trim(): Long = synchronized {
    // A store closed meanwhile has nothing to demote.
    val local = stores.asScala.toSeq.flatMap(s => scala.util.Try(s.localFiles).getOrElse(Nil))
    val demoted = toDemote(local, budgetBytes).filter(f => f.store.demote(f)).map(_.bytes).sum
    if (demoted > 0) {
      logInfo(s"Remote mode: demoted $demoted bytes of SST files to their checkpoint copies " +
        s"(${local.map(_.bytes).sum - demoted} bytes stay local, budget $budgetBytes)")
    }
    demoted
  }
}
