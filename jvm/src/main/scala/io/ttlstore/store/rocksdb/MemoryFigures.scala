package io.ttlstore.store.rocksdb

/**
 * One store's share of its executor's memory, as the progress reports it: every figure of the executor is split
 * evenly between its open RocksDB instances, so that summed over the stores an executor holds it is the executor's.
 *
 * @param budgetBytes   the budget ttlstore's RocksDB memory keeps to (bounded) or the block cache's size (unbounded)
 * @param cacheBytes    what the shared block cache holds: data blocks and, with bounded memory, the memtables
 * @param memtableBytes this store's own memtables (not a share)
 * @param residentBytes the JVM's resident memory ([[ResidentMemory]]), which a container limit holds
 */
final case class MemoryFigures(budgetBytes: Long, cacheBytes: Long, memtableBytes: Long, residentBytes: Long)

object MemoryFigures {
  val Zero: MemoryFigures = MemoryFigures(0L, 0L, 0L, 0L)
}
