package io.ttlstore.store.version

import io.ttlstore.ttl.TimestampHistogram

/**
 * numRowsTotal and the timestamp histogram of one store version: they count the stored rows stamped
 * at or after `countedFrom`. Without the native filter that is every row. With it, the commit
 * forgets the histogram's buckets whose rows are all expired and moves `countedFrom` past them
 * ([[forgetExpired]]): those rows are invisible and the filter drops them unseen, so they are
 * uncounted at once, and a row met later with an older stamp is removed or overwritten without
 * being counted twice. The histogram is the local copy's, changed in place (an aborted version's
 * local copy is reloaded).
 */
final class RowCounter(private var stored: Long, val timestamps: TimestampHistogram, private var from: Long) {
  def rows: Long = stored
  def countedFrom: Long = from

  def added(ts: Long): Unit = if (ts >= from) { stored += 1; timestamps.add(ts) }
  def removed(ts: Long): Unit = if (ts >= from) { stored -= 1; timestamps.remove(ts) }

  /** Uncounts the rows certainly expired (whole histogram buckets); returns how many. */
  def forgetExpired(ttlMs: Long, now: Long): Long = {
    val (dropped, below) = timestamps.dropExpired(ttlMs, now)
    stored -= dropped
    below.foreach(b => from = math.max(from, b))
    dropped
  }
}
