package io.ttlstore.store.version

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.execution.streaming.state.StateStoreId

import io.ttlstore.ttl.{EventTimeColumn, LegacyRowTimestamp, TtlPolicy}
import io.ttlstore.store.codec.KeyCodec

/** What a provider tells one store version when it opens it; the version never asks back. */
final case class VersionSettings(
    storeId: StateStoreId,
    /** The version opened; a commit makes `version + 1`. */
    version: Long,
    readOnly: Boolean,
    /** "Now" for this version, fixed so that one batch sees one time. */
    now: Long,
    /** The TTL settings this version applies: the query's, or for a state reader the recorded ones. */
    policy: TtlPolicy,
    keyCodec: KeyCodec,
    valueFields: Int,
    /** Event time: reads a row's event time; None in processing time. */
    eventTime: Option[EventTimeColumn],
    sweepRowsPerCommit: Int,
    /** With the native filter: the expired share of the stored rows that asks for a compaction. */
    compactExpiredShare: Double,
    upgradeRowsPerCommit: Int,
    legacyRowTimestamp: LegacyRowTimestamp,
    /** Whether the commit takes a snapshot (without the native filter it first removes every expired row). */
    snapshotOnCommit: Boolean,
    /** spark.sql.streaming.stateStore.compression.codec: the codec of the version's changelog. */
    changelogCodec: String,
    /** Spark's Hadoop configuration when Spark validates commits: the commit reports to its coordinator. */
    commitValidation: Option[Configuration],
    /** The load that made the local copy hold this version (reported in the metrics). */
    lastLoad: LoadFigures,
    /** Checkpoint format v2: the checkpoint id of the version opened (None at version 0, and in format v1). */
    loadedCheckpointId: Option[String],
    /** Checkpoint format v2: the checkpoint id the commit writes `version + 1` under; None in format v1. */
    checkpointId: Option[String],
    /** A `ttlstore_state` read to tell each scanned row's timestamp (see [[RowTimes]]). */
    rowTimes: Option[RowTimes] = None,
    /** Event time: `now` is the batch's watermark (recorded with the version for readers). */
    judgedByWatermark: Boolean = false,
    /** Reads ahead the version keeps in flight at once (readAhead.threads). */
    readAheadThreads: Int = 64,
    /** What each key read ahead becomes before it is read ([[io.ttlstore.config.TestHooks]]). */
    readAheadKey: Array[Byte] => Array[Byte] = io.ttlstore.config.TestHooks.SameKey) {

  override def toString: String = s"StoreVersion[$storeId, version=$version${if (readOnly) ", read-only" else ""}]"
}
