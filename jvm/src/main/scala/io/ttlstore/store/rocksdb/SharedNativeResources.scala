package io.ttlstore.store.rocksdb

import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.internal.Logging
import org.rocksdb.{Cache, LRUCache, RocksDB, WriteBufferManager}

import io.ttlstore.config.MemoryBudget

/**
 * Native resources shared by every store of one JVM (an executor): the RocksDB library, the block
 * cache and, with bounded memory, the write buffer manager that charges every store's memtables to
 * that cache. They live as long as the JVM, like Spark's own RocksDB provider's; the first store
 * opened sizes them.
 */
object SharedNativeResources extends Logging {

  /** The cache, and the write buffer manager every store's DB options take when memory is bounded. */
  final case class SharedMemory(budget: MemoryBudget, cache: Cache, writeBufferManager: Option[WriteBufferManager])

  @volatile private var memory: SharedMemory = _
  @volatile private var warnedOtherBudget = false
  private val openInstances = new AtomicInteger()

  /**
   * Half of the cache is kept for index and filter blocks (cached with high priority), so that a
   * scan of data blocks cannot push out what every lookup needs first.
   */
  private val HighPriorityShare = 0.5

  def ensureLoaded(): Unit = RocksDB.loadLibrary()

  /**
   * The memory of this JVM's stores, made with the first budget asked for. A later store asking for
   * another (a second query's settings) gets the first, with one warning: what RocksDB charges
   * cannot be split between two budgets.
   */
  def sharedMemory(budget: MemoryBudget): SharedMemory = {
    if (memory == null) synchronized {
      if (memory == null) {
        // Not strict: a cache whose pinned entries (memtables, blocks in use) fill it still admits
        // a read's block rather than failing the read.
        val cache = new LRUCache(budget.cacheBytes, shardBits(budget.cacheBytes), false, HighPriorityShare)
        memory = SharedMemory(budget, cache, budget.writeBufferBytes.map(new WriteBufferManager(_, cache, false)))
        logInfo(s"ttlstore's RocksDB memory in this executor: ${budget.describe}; cached blocks of files " +
          (if (FamilyOptions.uncachesObsoleteFiles) "compactions replace leave the cache with their files"
           else "compactions replace stay until the cache's LRU evicts them (this RocksDB has no " +
             "uncache_aggressiveness)"))
      }
    }
    val shared = memory
    if (shared.budget != budget && !warnedOtherBudget) {
      warnedOtherBudget = true
      logWarning(s"A ttlstore store asked for RocksDB memory (${budget.describe}) other than what this " +
        s"executor's first store set (${shared.budget.describe}); all stores of an executor share the " +
        "first. Set the memory settings once per application.")
    }
    shared
  }

  /**
   * Shards of at least [[MinShardBytes]] (at most 64, as RocksDB's default). The cache's limit holds
   * per shard, and a shard whose pinned entries (memtable reservations of 256 KiB, blocks in use)
   * exceed it goes past it: with RocksDB's 1 MiB shards for 64 MiB, 200 stores took the cache 3%
   * past its size.
   */
  def shardBits(cacheBytes: Long): Int = {
    val shards = math.max(cacheBytes / MinShardBytes, 1L)
    math.min(63 - java.lang.Long.numberOfLeadingZeros(shards), 6)
  }
  private val MinShardBytes = 4L * 1024 * 1024

  /** Counts a RocksDB instance in (opened) or out (closed): the cache's usage is split between them. */
  def instanceOpened(): Unit = openInstances.incrementAndGet()
  def instanceClosed(): Unit = openInstances.decrementAndGet()

  /**
   * This instance's share of the shared cache: its usage (blocks and, when bounded, the memtables
   * charged to it) over the open instances. Summed over an executor's stores it is the cache's usage,
   * as Spark's provider reports bounded memory.
   */
  def cacheShareBytes: Long = Option(memory).fold(0L)(shared => share(shared.cache.getUsage))

  /** This instance's share of the budget (bounded) or of the cache's size (unbounded), as [[cacheShareBytes]]. */
  def budgetShareBytes: Long = Option(memory).fold(0L)(shared => share(shared.budget.cacheBytes))

  /** This instance's share of the JVM's resident memory, as [[cacheShareBytes]]. */
  def residentShareBytes: Long = share(ResidentMemory.bytes)

  private def share(executorBytes: Long): Long = executorBytes / math.max(openInstances.get, 1)
}
