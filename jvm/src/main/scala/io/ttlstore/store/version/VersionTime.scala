package io.ttlstore.store.version

import org.apache.hadoop.conf.Configuration

import io.ttlstore.checkpoint.OffsetLog
import io.ttlstore.ttl.{Clock, TimeCharacteristic}
import io.ttlstore.store.local.LocalCopy

/**
 * "Now" for a version a provider opens, which the micro-batch with the same id writes on
 * (docs/ttl.md, "What now is"). Processing time: the time an earlier attempt of the batch judged by,
 * if one committed this store; else the batch's timestamp in Spark's offset log, one time for every
 * partition and every attempt of the batch; else (a store outside a streaming query, or with the
 * testing clock set) the clock, read once. Event time: the batch's watermark when the query has
 * one, else the stream time recorded with the version (the store's own, as Kafka Streams keeps it).
 */
final class VersionTime(
    local: LocalCopy,
    time: TimeCharacteristic,
    testingClock: Boolean,
    /** `<checkpoint>/state` (Spark's offset log is beside it). */
    stateRoot: String,
    hadoopConf: Configuration,
    clock: () => Clock) {

  def at(version: Long): Long = time match {
    case TimeCharacteristic.ProcessingTime =>
      local.earlierAttemptNow(version)
        .orElse(if (testingClock) None else OffsetLog.batchTime(stateRoot, version, hadoopConf).map(_.timestampMs))
        .getOrElse(clock().millis())
    case TimeCharacteristic.EventTime => watermarkAt(version).getOrElse(local.streamTime)
  }

  /**
   * Event time with a watermark: the watermark Spark recorded for the batch, one query-wide time
   * that every partition judges by (an idle partition too) and every attempt reuses. None in
   * processing time, and before the query's watermark has moved (Spark records 0 then).
   */
  def watermarkAt(version: Long): Option[Long] =
    if (time != TimeCharacteristic.EventTime) None
    else OffsetLog.batchTime(stateRoot, version, hadoopConf).map(_.watermarkMs).filter(_ > 0)
}
