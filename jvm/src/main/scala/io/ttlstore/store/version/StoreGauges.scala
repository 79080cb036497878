package io.ttlstore.store.version

import io.ttlstore.spark.StoreGauge
import io.ttlstore.spark.StoreGauge._
import io.ttlstore.store.local.StoreFootprint

/** The values of ttlstore's per-store figures ([[StoreGauge]]) for one store. */
object StoreGauges {

  /** For a store with `footprint` and `expiredStored` rows expired on disk, at wall time `nowMs`. */
  def values(footprint: StoreFootprint, expiredStored: Long, nowMs: Long): Seq[(StoreGauge, Long)] = Seq(
    SnapshotLastUploaded -> footprint.snapshot.fold(-1L)(_.version),
    SnapshotAgeMs -> footprint.snapshot.fold(-1L)(s => math.max(0L, nowMs - s.createdAtMs)),
    ExpiredRowsStored -> expiredStored,
    LocalBytes -> footprint.localBytes,
    FilesNotLocal -> footprint.filesNotLocal.toLong)
}
