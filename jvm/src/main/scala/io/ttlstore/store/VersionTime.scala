package io.ttlstore.store

import org.apache.hadoop.conf.Configuration

import io.ttlstore.checkpoint.OffsetLog
import io.ttlstore.ttl.{Clock, TimeCharacteristic}

/**
 * "Now" for a version a provider opens, which the micro-batch with the same id writes on
 * (docs/ttl.md, "What now is"). Processing time: the time an earlier attempt of the batch judged by,
 * if one committed this store; else the batch's timestamp in Spark's offset log, one time for every
 * partition and every attempt of the batch; else (a store outside a streaming query, or with the
 * testing clock set) the clock, read once. Event time: the stream time recorded with the version.
 */
final class VersionTime(
    local: LocalStore,
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
    case TimeCharacteristic.EventTime => local.streamTime
  }
}
