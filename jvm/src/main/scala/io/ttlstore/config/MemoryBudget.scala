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
  import BudgetRule._
  import TtlStoreConfig._

  private val MiB = 1024L * 1024

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
