package io.ttlstore.store.local

import io.ttlstore.checkpoint.TtlRecord
import io.ttlstore.ttl.TimestampHistogram

/**
 * What a local copy knows of the committed version it holds: its rows (numRowsTotal), their
 * timestamps, the stream time (event time), which rows are counted, the legacy rows left, and the
 * version's TTL record. Set by a restore, each replayed changelog and each commit.
 */
final class CommittedState {
  private var rowCount = 0L

  /** The timestamps of the stored rows; changed in place by the store version being written. */
  private var histogram = TimestampHistogram.empty()

  /** The largest event time seen up to the version; Long.MinValue before any. */
  private var streamTimeMs = Long.MinValue

  /** Rows stamped before this are not counted in numRows or the histogram (see [[RowCounter]]). */
  private var countedFromMs = Long.MinValue

  /** Rows in the legacy family (an adopted checkpoint's rows not yet upgraded). */
  private var legacyRowCount = 0L
  private var record: Option[TtlRecord] = None

  def rows: Long = rowCount
  def timestamps: TimestampHistogram = histogram
  def streamTime: Long = streamTimeMs
  def countedFrom: Long = countedFromMs
  def legacyRows: Long = legacyRowCount

  /** The TTL record of the version; None when it predates TTL records or nothing was committed. */
  def recorded: Option[TtlRecord] = record

  /** Restored from a snapshot of `rows` rows described by `ttl` (or the empty state). */
  def restored(rows: Long, ttl: Option[TtlRecord]): Unit = {
    legacyRowCount = 0L
    replayed(rows, ttl)
  }

  /** A changelog replayed: `rowsAfter` rows, described by its `ttl`. */
  def replayed(rowsAfter: Long, ttl: Option[TtlRecord]): Unit = {
    rowCount = rowsAfter
    record = ttl
    ttl.foreach(t => legacyRowCount = t.legacyRows.getOrElse(0L))
    histogram = ttl.map(_.timestamps).getOrElse(TimestampHistogram.empty())
    streamTimeMs = ttl.flatMap(_.streamTimeMs).getOrElse(Long.MinValue)
    countedFromMs = ttl.flatMap(_.countedFromMs).getOrElse(Long.MinValue)
  }

  /** An adopted checkpoint's rows loaded into the legacy family. */
  def adopted(legacyRows: Long): Unit = legacyRowCount = legacyRows

  def committed(rows: Long, ttl: TtlRecord): Unit = {
    rowCount = rows
    streamTimeMs = ttl.streamTimeMs.getOrElse(Long.MinValue)
    countedFromMs = ttl.countedFromMs.getOrElse(Long.MinValue)
    legacyRowCount = ttl.legacyRows.getOrElse(0L)
    record = Some(ttl)
  }

  /** The timestamps counted again with one scan (a version written before TTL records). */
  def rebuilt(counted: TimestampHistogram): Unit = histogram = counted

  /** Everything stored counted again (after a TTL change): rows and timestamps from one scan. */
  def recounted(counted: TimestampHistogram): Unit = {
    histogram = counted
    rowCount = counted.total
    countedFromMs = Long.MinValue
  }
}
