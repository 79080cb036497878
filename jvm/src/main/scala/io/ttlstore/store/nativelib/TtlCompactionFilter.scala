package io.ttlstore.store.nativelib

import org.rocksdb.{AbstractCompactionFilter, Slice}

/**
 * A native TTL compaction filter for one column family: RocksDB removes, while compacting, the
 * values that `ttl_should_remove` (the JVM's expiry rule) says are expired at the pushed "now".
 * RocksJava deletes the native filter, and with it the state, when this object is closed: close it
 * only after the DB that uses it.
 */
final class TtlCompactionFilter private[ttlstore] (handles: Array[Long], lib: NativeTtlFilterLib)
  extends AbstractCompactionFilter[Slice](handles(0)) {
  private val state = handles(1)

  /** The time compactions judge expiry by from now on (processing time, or stream time). */
  def setNow(now: Long): Unit = synchronized { if (isOwningHandle) lib.setNow(state, now) }

  /** The TTL compactions judge expiry by from now on; 0 removes nothing. */
  def setTtl(ttlMs: Long): Unit = synchronized { if (isOwningHandle) lib.setTtl(state, ttlMs) }

  /** Rows this filter has removed so far. */
  def removedRows: Long = synchronized { if (isOwningHandle) lib.removed(state) else 0L }

  override def close(): Unit = synchronized { super.close() }
}
