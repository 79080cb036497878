package io.ttlstore.checkpoint

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.fs.Path

/**
 * One lock per store checkpoint directory, shared by every provider instance in this JVM.
 *
 * Spark keeps an old query run's provider loaded until maintenance unloads it, so two instances of
 * one store often work on its files at once: the old one uploading its last snapshot, the new one
 * cleaning up. An upload references SSTs that an earlier snapshot uploaded; cleanup deletes SSTs
 * that no listed snapshot references. Run one at a time, cleanup sees the new snapshot's manifest
 * or the upload sees the deletions. (Instances in other JVMs are covered by the upload's own
 * checks: [[CheckpointFiles.writeSnapshot]].) A lock lives while someone holds or waits for it.
 */
object StoreLock {
  private final class Held { var users = 0 }
  private val held = new ConcurrentHashMap[String, Held]()

  def exclusively[T](root: Path)(body: => T): T = {
    val key = root.toString
    val lock = held.compute(key, (_, h) => { val l = if (h == null) new Held else h; l.users += 1; l })
    try lock.synchronized(body)
    finally held.compute(key, (_, h) => { h.users -= 1; if (h.users == 0) null else h })
  }

  /** For tests: whether the lock of the store at `root` is alive (held or waited for). */
  private[ttlstore] def alive(root: Path): Boolean = held.containsKey(root.toString)
}
