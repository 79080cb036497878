package io.ttlstore.store.local

/**
 * What a store with the native filter keeps between versions: the rows that expired since it last
 * asked for a compaction, whether it asks now, and the filter's removal count at the last commit.
 * Reset whenever the local DB is restored.
 */
final class FilterUpkeep {
  private var expiredSinceRequest = 0L
  @volatile private var requested = false
  private var removedAtCommit = 0L

  /** Rows uncounted as expired that the filter has not been seen to drop yet (an estimate). */
  private var pending = 0L

  /** Rows uncounted as expired and probably still on disk: uncounted minus what the filter dropped. */
  def expiredOnDisk: Long = synchronized(pending)

  /** A compaction of every file ran: the filter dropped every row expired at the pushed time. */
  def compacted(): Unit = synchronized { pending = 0L }

  /**
   * Counts `dropped` rows as expired since the last compaction request; once those reach `share` of
   * the stored rows (and at least [[FilterUpkeep.MinRowsToCompact]]) asks for a compaction and
   * returns true: the native filter then sees every file.
   */
  def expired(dropped: Long, storedRows: Long, share: Double): Boolean = synchronized {
    pending += dropped
    expiredSinceRequest += dropped
    val n = expiredSinceRequest
    if (share > 0 && n >= FilterUpkeep.MinRowsToCompact && n >= share * (storedRows + n)) {
      requested = true
      expiredSinceRequest = 0L
      true
    } else false
  }

  /** True once if a compaction was asked for since the previous call. */
  def takeRequest(): Boolean = {
    val r = requested
    requested = false
    r
  }

  /** Of the filter's running total of removed rows, those removed since the previous call. */
  def removedSince(total: Long): Long = synchronized {
    val delta = math.max(0L, total - removedAtCommit)
    removedAtCommit = total
    pending = math.max(0L, pending - delta)
    delta
  }

  def reset(): Unit = synchronized {
    expiredSinceRequest = 0L
    requested = false
    removedAtCommit = 0L
    pending = 0L
  }
}

object FilterUpkeep {

  /** Fewer expired rows than this never trigger a compaction (not worth rewriting files for). */
  val MinRowsToCompact = 1000L
}
