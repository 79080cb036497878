package io.ttlstore.store

import org.rocksdb.{Cache, LRUCache, RocksDB}

/**
 * Native resources shared by every store of one JVM (an executor): the RocksDB library and the
 * block cache. They live as long as the JVM, like Spark's own RocksDB provider's.
 */
object SharedNativeResources {
  @volatile private var cache: Cache = _
  private val HighPriorityShare = 0.5

  def ensureLoaded(): Unit = RocksDB.loadLibrary()

  /**
   * Half of the cache is kept for index and filter blocks (cached with high priority), so that a
   * scan of data blocks cannot push out what every lookup needs first.
   */
  def blockCache(sizeMb: Long): Cache = {
    if (cache == null) synchronized {
      if (cache == null) cache = new LRUCache(math.max(sizeMb, 1L) * 1024 * 1024, -1, false, HighPriorityShare)
    }
    cache
  }
}
