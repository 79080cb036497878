package io.ttlstore.store.version

import io.ttlstore.store.codec.TimestampedValue
import io.ttlstore.store.rocksdb.RocksDbHandle

/**
 * The incremental sweep: examines up to `budget` stored rows in key order, starting at `from` and
 * wrapping around once, and hands every expired one to `remove`. Where it stops, the next sweep
 * resumes, so over several commits it visits every row. Its iterator sees the rows as they were
 * when it started, so `remove` may delete what it is handed.
 */
object ExpiredRowSweep {
  final case class Result(examined: Long, removed: Long, resumeAt: Option[Array[Byte]])

  def run(
      db: RocksDbHandle,
      from: Option[Array[Byte]],
      budget: Long,
      isExpired: Long => Boolean,
      remove: (Array[Byte], Long) => Unit): Result = {
    val it = db.newIterator()
    var examined = 0L
    var removed = 0L
    try {
      from match {
        case Some(k) => it.seek(k)
        case None => it.seekToFirst()
      }
      var wrapped = from.isEmpty
      var done = false
      while (!done && examined < budget) {
        if (!it.isValid) {
          if (wrapped) done = true else { wrapped = true; it.seekToFirst() }
        } else if (wrapped && from.exists(f => compare(it.key(), f) >= 0)) {
          done = true // back where this sweep started: every row was examined
        } else {
          val value = it.value()
          if (TimestampedValue.hasTimestamp(value)) {
            val ts = TimestampedValue.timestamp(value)
            if (isExpired(ts)) { remove(it.key(), ts); removed += 1 }
          }
          examined += 1
          it.next()
        }
      }
      val resumeAt = if (done || !it.isValid) None else Some(it.key())
      Result(examined, removed, resumeAt)
    } finally it.close()
  }

  /** RocksDB's default order: unsigned bytes, shorter first on a common prefix. */
  private def compare(a: Array[Byte], b: Array[Byte]): Int =
    java.util.Arrays.compareUnsigned(a, b)
}
