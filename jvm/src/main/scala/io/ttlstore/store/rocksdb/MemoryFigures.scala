package io.ttlstore.store.rocksdb

/**
 * One store's share of its executor's memory, as the progress reports it: every figure of the executor is split
 * evenly between its open RocksDB instances, so that summed over the stores an executor holds it is the executor's.
 *
 * @param budgetBytes      the budget ttlstore's RocksDB memory keeps to (bounded) or the block cache's size
 *                         (unbounded)
 * @param cacheBytes       what the shared block cache holds: data blocks and, with bounded memory, the memtables
 * @param memtableBytes    this store's own memtables (not a share)
 * @param residentBytes    the JVM's resident memory ([[ResidentMemory]]), which a container limit holds
 * @param tableReaderBytes this store's table readers outside the cache (its files' index and filter blocks)
 * @param memtablesInCache whether the memtables are charged to the cache (bounded memory), and so in `cacheBytes`
 */
final case class MemoryFigures(budgetBytes: Long, cacheBytes: Long, memtableBytes: Long, residentBytes: Long,
    tableReaderBytes: Long, memtablesInCache: Boolean) {

  /** What the store holds, as Spark's `memoryUsedBytes` counts it: its table readers, its share of the cache and
   * its memtables where the cache does not count them. */
  def usedBytes: Long = tableReaderBytes + cacheBytes + (if (memtablesInCache) 0L else memtableBytes)
}

object MemoryFigures {
  val Zero: MemoryFigures = MemoryFigures(0L, 0L, 0L, 0L, 0L, memtablesInCache = true)
}
