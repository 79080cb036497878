package io.ttlstore.store.local

import io.ttlstore.checkpoint.{Changelog, ChangelogReader}
import io.ttlstore.ttl.TimestampHistogram
import io.ttlstore.store.codec.TimestampedValue
import io.ttlstore.store.rocksdb.RocksDbHandle

/** How a local copy catches up with the checkpoint: changelogs replayed, timestamps recounted. */
object Replay {

  /**
   * Applies every record of `reader` to `db` in large write batches. While the store holds legacy
   * rows (`legacy`), every change of a key also takes it out of the legacy family: the live store
   * moved or deleted it there too. Each key put is handed to `put`.
   */
  def changelog(reader: ChangelogReader, db: RocksDbHandle, legacy: Boolean, put: Array[Byte] => Unit): Unit = {
    val batch = db.newBatch()
    try {
      var record = reader.next()
      while (record.isDefined) {
        record.get match {
          case Changelog.Put(k, v) =>
            batch.put(k, v)
            put(k)
            if (legacy) batch.deleteLegacy(k)
          case Changelog.Delete(k) => batch.delete(k); if (legacy) batch.deleteLegacy(k)
        }
        batch.flushIfFull()
        record = reader.next()
      }
      batch.flushTo()
    } finally batch.close()
  }

  /**
   * Counts the rows' timestamps with one scan: for versions written before TTL records (format 1),
   * which carry no histogram, and after a TTL change.
   */
  def timestamps(db: RocksDbHandle): TimestampHistogram = {
    val h = TimestampHistogram.empty()
    val it = db.newIterator()
    try {
      it.seekToFirst()
      while (it.isValid) {
        val v = it.value()
        if (TimestampedValue.hasTimestamp(v)) h.add(TimestampedValue.timestamp(v))
        it.next()
      }
    } finally it.close()
    h
  }
}
