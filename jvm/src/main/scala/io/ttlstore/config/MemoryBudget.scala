package io.ttlstore.config

import io.ttlstore.errors.TtlStoreErrors

/**
 * The RocksDB memory all ttlstore stores of one executor share: one block cache of `cacheBytes`
 * and, when bounded, a write buffer manager that charges every store's memtables to that cache and
 * makes a store flush once all memtables together reach `writeBufferBytes`. `origin` says where
 * the figure comes from (not part of equality: two budgets of the same sizes are the same budget).
 */
final case class MemoryBudget(bounded: Boolean, cacheBytes: Long, writeBufferBytes: Option[Long])(
    val origin: String = TtlStoreConfig.MaxMemoryUsageMb.key) {
  def describe: String =
    if (bounded)
      s"bounded: ${cacheBytes >> 20} MiB, memtables at most ${writeBufferBytes.getOrElse(0L) >> 20} MiB of it " +
        s"($origin)"
    else s"unbounded: block cache ${cacheBytes >> 20} MiB, memtables outside it"
}

object MemoryBudget {
  import TtlStoreConfig._

  private val MiB = 1024L * 1024

  /**
   * What an executor's overhead must hold beside ttlstore's native memory: the JVM's own memory outside its heap
   * (metaspace, code, threads, the collector's structures, Netty's buffers). Measured by `make soak-memory` on
   * executors of 1 GiB (the soak's): 241 MiB, and 260-268 MiB on executors of 2 GiB (docs/memory.md).
   */
  val ReserveMiB = 288L

  /**
   * ttlstore's native memory at its peak for each MiB of budget: the budget itself, and as much again beside it
   * once reads and compactions churn a full cache (glibc's arenas keep what RocksDB's threads freed; index and
   * filter blocks, table readers). Measured on `--shape cache-churn` (docs/memory.md, "A state of some hundreds of
   * MiB"): 1.9-2.3x the state memory per executor, with budgets of 48, 64 and 96 MiB.
   */
  val PeakPerBudgetMiB = 2L // maxMemoryUsageMB's doc says "half" and "twice"

  /** The budget without an overhead to fit (local mode), and the most a derived budget takes. */
  val LocalMiB = 512L

  /** The least a derived budget takes, however small the overhead. */
  val FloorMiB = 64L

  /** The largest budget whose peak fits an overhead of `overheadMiB` beside [[ReserveMiB]] (0 if none does). */
  def fitsMiB(overheadMiB: Long): Long = math.max(overheadMiB - ReserveMiB, 0L) / PeakPerBudgetMiB

  /**
   * The budget when `maxMemoryUsageMB` is unset: on executors, the largest that fits the overhead ([[fitsMiB]]), at
   * least [[FloorMiB]] and at most [[LocalMiB]]; in local mode, [[LocalMiB]].
   */
  def derivedMiB(overhead: ExecutorOverhead): Long =
    if (overhead.manager == ClusterManager.Local) LocalMiB
    else math.min(LocalMiB, math.max(FloorMiB, fitsMiB(overhead.mib)))

  /** The overhead in MiB that a budget of `budgetMiB` needs. */
  def overheadNeededMiB(budgetMiB: Long): Long = ReserveMiB + PeakPerBudgetMiB * budgetMiB

  /**
   * The budget the confs set, for executors with `overhead`. The sizes of the other mode are refused rather than
   * ignored: a `blockCacheSizeMB` with bounded memory would silently not size anything. An explicit budget that
   * cannot fit an overhead a container limit enforces is refused: the executor would be killed once its cache
   * fills, hours into a stream.
   */
  def parse(confs: Map[String, String], overhead: ExecutorOverhead = ExecutorOverhead.Local): MemoryBudget = {
    val bounded = BoundedMemoryUsage.readFrom(confs)
    val ignored = (if (bounded) Seq(BlockCacheSizeMb) else Seq(MaxMemoryUsageMb, WriteBufferCacheRatio))
      .map(_.key).filter(confs.contains)
    ignored.headOption.foreach { key =>
      throw TtlStoreErrors.settingOfOtherMemoryMode(key, BoundedMemoryUsage.key, bounded,
        if (bounded) MaxMemoryUsageMb.key else BlockCacheSizeMb.key)
    }
    if (bounded) {
      val (mib, origin) = MaxMemoryUsageMb.readFrom(confs) match {
        case Some(set) =>
          if (overhead.manager.enforcesOverhead && overheadNeededMiB(set) > overhead.mib) {
            throw TtlStoreErrors.budgetExceedsOverhead(MaxMemoryUsageMb.key, set, overhead.mib, overhead.how,
              overhead.manager.name, overheadNeededMiB(set), fitsMiB(overhead.mib), derivedMiB(overhead))
          }
          set -> MaxMemoryUsageMb.key
        case None if overhead.manager == ClusterManager.Local =>
          LocalMiB -> s"${MaxMemoryUsageMb.key} unset, local mode"
        case None =>
          derivedMiB(overhead) -> (s"${MaxMemoryUsageMb.key} unset: derived from the executors' memory overhead " +
            s"of ${overhead.mib} MiB (${overhead.how})")
      }
      val total = mib * MiB
      MemoryBudget(bounded = true, total, Some((total * WriteBufferCacheRatio.readFrom(confs)).toLong))(origin)
    } else MemoryBudget(bounded = false, math.max(BlockCacheSizeMb.readFrom(confs), 1L) * MiB, None)()
  }
}
