package io.ttlstore.ttl

import java.util.{TreeMap => JTreeMap}

import io.ttlstore.compat.CollectionConverters._

/**
 * How many stored rows carry which timestamps, in buckets `granularityMs` wide, at most
 * [[TimestampHistogram.MaxBuckets]] of them: when there would be more, buckets merge pairwise (the
 * granularity doubles). In processing time every row written by one version carries that version's
 * "now", so the buckets are exact until more than `MaxBuckets` versions' rows are alive.
 *
 * It answers, without reading a row: may any row be expired (decides whether the sweep runs), and
 * how many rows are certainly expired (the `expired rows still stored` metric). Kept in step with
 * every put and delete, and recorded with each version so that loading needs no scan. Pure data.
 */
final class TimestampHistogram private (private var granularity: Long) {
  import TimestampHistogram._

  private val buckets = new JTreeMap[java.lang.Long, Count]()
  private var rows = 0L
  // Puts of one version mostly share one timestamp (processing time): the last bucket touched is
  // kept at hand, so they cost no map lookup and no boxing. So are the rows an update replaces,
  // mostly written by one earlier version: the last bucket a removal found is kept too (without
  // it, 9% of an aggregation's sampled task time at 100k keys per store was spent looking up and
  // boxing buckets; docs/performance.md).
  private var lastBucket = Long.MinValue
  private var lastCount: Count = _
  private var removedBucket = Long.MinValue
  private var removedCount: Count = _

  def granularityMs: Long = granularity
  def total: Long = rows
  def isEmpty: Boolean = rows == 0

  def add(ts: Long): Unit = {
    bump(bucketOf(ts), 1L)
    rows += 1
    if (buckets.size > MaxBuckets) coarsen()
  }

  /** Forgets one row stamped `ts` (the caller read that stamp from the row it deletes). */
  def remove(ts: Long): Unit = {
    val b = bucketOf(ts)
    val count =
      if (lastCount != null && b == lastBucket) lastCount
      else if (removedCount != null && b == removedBucket) removedCount
      else {
        val c = buckets.get(b)
        if (c != null) { removedBucket = b; removedCount = c }
        c
      }
    if (count != null) {
      count.n -= 1
      if (count.n <= 0) forget(b, count)
      rows -= 1
    }
  }

  /** The smallest timestamp any stored row can have (a bucket start); None when empty. */
  def oldest: Option[Long] = if (buckets.isEmpty) None else Some(buckets.firstKey())

  /** True if some stored row may be expired at `now`: only then is a sweep worth its reads. */
  def mayHaveExpired(ttlMs: Long, now: Long): Boolean =
    oldest.exists(ts => ExpiryRule.isExpired(ts, ttlMs, now))

  /** Rows that are expired at `now` for certain: those in buckets whose newest instant is expired. */
  def certainlyExpired(ttlMs: Long, now: Long): Long = {
    var n = 0L
    val it = buckets.entrySet().iterator()
    var going = ttlMs > 0
    while (going && it.hasNext) {
      val e = it.next()
      val newest = newestIn(e.getKey)
      if (ExpiryRule.isExpired(newest, ttlMs, now)) n += e.getValue.n else going = false
    }
    n
  }

  /**
   * Forgets the buckets whose rows are all expired at `now`: returns how many rows they held and
   * the instant below which every row is expired (the end of the newest bucket forgotten), or None
   * when no bucket was.
   */
  def dropExpired(ttlMs: Long, now: Long): (Long, Option[Long]) = {
    var n = 0L
    var below: Option[Long] = None
    var going = ttlMs > 0
    while (going && !buckets.isEmpty) {
      val first = buckets.firstEntry()
      val newest = newestIn(first.getKey)
      if (ExpiryRule.isExpired(newest, ttlMs, now)) {
        n += first.getValue.n
        below = Some(if (newest == Long.MaxValue) newest else newest + 1)
        forget(first.getKey, first.getValue)
      } else going = false
    }
    rows -= n
    (n, below)
  }

  def entries: Seq[(Long, Long)] = buckets.asScala.toSeq.map { case (k, v) => (k.longValue, v.n) }

  /** The newest instant a bucket covers. */
  private def newestIn(bucket: Long): Long =
    if (bucket > Long.MaxValue - (granularity - 1)) Long.MaxValue else bucket + granularity - 1

  private def bucketOf(ts: Long): Long = Math.floorDiv(ts, granularity) * granularity

  /** Adds `n` (> 0) rows to a bucket, which becomes the one at hand for puts ([[remove]] has its own). */
  private def bump(bucket: Long, n: Long): Unit = {
    val count =
      if (lastCount != null && bucket == lastBucket) lastCount
      else {
        var c = buckets.get(bucket)
        if (c == null) { c = new Count; buckets.put(bucket, c) }
        lastBucket = bucket
        lastCount = c
        c
      }
    count.n += n
  }

  /** Drops an emptied or expired bucket, and the shortcuts to it. */
  private def forget(bucket: Long, count: Count): Unit = {
    buckets.remove(bucket)
    if (count eq lastCount) lastCount = null
    if (count eq removedCount) removedCount = null
  }

  private def coarsen(): Unit = {
    val old = entries
    buckets.clear()
    lastCount = null
    removedCount = null
    granularity = if (granularity > Long.MaxValue / 2) granularity else granularity * 2
    old.foreach { case (b, n) => bump(bucketOf(b), n) }
  }
}

object TimestampHistogram {
  val MaxBuckets = 128

  /** A bucket's row count, changed in place. */
  private final class Count { var n = 0L }

  def empty(): TimestampHistogram = new TimestampHistogram(1L)

  /** Rebuilds a recorded histogram. */
  def apply(granularityMs: Long, entries: Seq[(Long, Long)]): TimestampHistogram = {
    require(granularityMs >= 1, s"granularity must be at least 1 ms, was $granularityMs")
    val h = new TimestampHistogram(granularityMs)
    entries.foreach { case (b, n) => if (n > 0) { h.bump(h.bucketOf(b), n); h.rows += n } }
    while (h.buckets.size > MaxBuckets) h.coarsen()
    h
  }
}
