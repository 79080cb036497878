package io.ttlstore.config

import io.ttlstore.errors.TtlStoreErrors

/**
 * The RocksDB memory all ttlstore stores of one executor share: one block cache of `cacheBytes`
 * and, when bounded, a write buffer manager that charges every store's memtables to that cache and
 * makes a store flush once all memtables together reach `writeBufferBytes`.
 */
final case class MemoryBudget(bounded: Boolean, cacheBytes: Long, writeBufferBytes: Option[Long]) {
  def describe: String =
    if (bounded)
      s"bounded: ${cacheBytes >> 20} MiB, memtables at most ${writeBufferBytes.getOrElse(0L) >> 20} MiB of it"
    else s"unbounded: block cache ${cacheBytes >> 20} MiB, memtables outside it"
}

object MemoryBudget {
  import TtlStoreConfig._

  private val MiB = 1024L * 1024

  /**
   * The budget the confs set. The sizes of the other mode are refused rather than ignored: a
   * `blockCacheSizeMB` with bounded memory would silently not size anything.
   */
  def parse(confs: Map[String, String]): MemoryBudget = {
    val bounded = BoundedMemoryUsage.readFrom(confs)
    val ignored = (if (bounded) Seq(BlockCacheSizeMb) else Seq(MaxMemoryUsageMb, WriteBufferCacheRatio))
      .map(_.key).filter(confs.contains)
    ignored.headOption.foreach { key =>
      throw TtlStoreErrors.settingOfOtherMemoryMode(key, BoundedMemoryUsage.key, bounded,
        if (bounded) MaxMemoryUsageMb.key else BlockCacheSizeMb.key)
    }
    if (bounded) {
      val total = MaxMemoryUsageMb.readFrom(confs) * MiB
      MemoryBudget(bounded = true, total, Some((total * WriteBufferCacheRatio.readFrom(confs)).toLong))
    } else MemoryBudget(bounded = false, math.max(BlockCacheSizeMb.readFrom(confs), 1L) * MiB, None)
  }
}
