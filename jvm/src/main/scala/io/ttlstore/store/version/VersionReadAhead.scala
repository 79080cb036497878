package io.ttlstore.store.version

import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.{AtomicInteger, LongAdder}

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.expressions.UnsafeRow

import io.ttlstore.checkpoint.CheckpointRangedReads
import io.ttlstore.config.TestHooks
import io.ttlstore.readahead.ReadAheadTarget
import io.ttlstore.store.codec.KeyCodec
import io.ttlstore.store.local.ReadAheadUse
import io.ttlstore.store.rocksdb.RocksDbHandle
import io.ttlstore.threads.DaemonThreads

/**
 * Reading ahead for one open store version ([[ReadAheadTarget]]): the keys the read-ahead node asks are encoded
 * on the task's thread (a key equal to the one before is asked once) and read by up to `inFlight` readers of the
 * executor's pool at once, each read only bringing the key's blocks into RocksDB's block cache
 * ([[RocksDbHandle.warm]]). A read ahead that fails is counted and dropped: the operator's own read decides. When
 * the version ends ([[stop]]) the keys not read yet are dropped; a read under way ends on its own, and the DB's
 * close waits for it. Whether to go on reading ahead is the store's [[ReadAheadUse]], told what the reads did.
 * The versions of one store a task opens share it ([[io.ttlstore.readahead.ReadAheadTargets]]), and with it where their count of the
 * checkpoint's reads starts.
 */
final class VersionReadAhead(db: RocksDbHandle, keyCodec: KeyCodec, use: ReadAheadUse, inFlight: Int,
    hook: Array[Byte] => Array[Byte] = TestHooks.SameKey,
    /** The reads the checkpoint had served the DB when the task opened its first version of the store. */
    val checkpointReadsAtFirstOpen: CheckpointRangedReads.Served = CheckpointRangedReads.Served.Zero)
  extends ReadAheadTarget
  with Logging {

  /** The executor's readers, grown to this version's bound at its first read ahead. */
  private lazy val pool = { VersionReadAhead.readers.atLeast(inFlight); VersionReadAhead.readers }
  private val keys = new ConcurrentLinkedQueue[Array[Byte]]()
  private val readers = new AtomicInteger()
  @volatile private var stopped = false
  private var last: Array[Byte] = null
  private var sent = 0L

  val figures = new VersionReadAhead.Figures
  private var told = (0L, 0L, 0L, checkpointReadsAtFirstOpen.reads)

  /** True if it reads `handle` (a store's versions in one task read one DB unless a load replaced it between). */
  def reads(handle: RocksDbHandle): Boolean = handle eq db

  /** True while the node reads the current chunk ahead: only then are the operator's reads timed. */
  @volatile var readingAhead = false

  override def wanted(): Boolean = {
    val now = (figures.asked, figures.read.sum(), figures.readNanos.sum(), db.checkpointReads.reads)
    use.measured(now._1 - told._1, now._2 - told._2, now._3 - told._3, now._4 - told._4)
    told = now
    readingAhead = !stopped && use.readAhead()
    readingAhead
  }

  override def ask(key: UnsafeRow): Unit = {
    val k = keyCodec.encode(key)
    if (last == null || !java.util.Arrays.equals(last, k)) {
      last = k
      keys.add(k)
      sent += 1
    }
  }

  override def send(): Unit = {
    figures.asked += sent
    sent = 0
    while (!stopped && !keys.isEmpty && readers.get < inFlight) {
      readers.incrementAndGet()
      pool.execute(() => drain())
    }
  }

  /** Drops the keys not read yet; reads under way end on their own. */
  def stop(): Unit = {
    stopped = true
    keys.clear()
  }

  private def drain(): Unit = {
    var k = keys.poll()
    while (k != null && !stopped) {
      val start = System.nanoTime()
      try {
        val key = hook(k)
        if (key != null) db.warm(key) match {
          case RocksDbHandle.Warmed.Read =>
            figures.read.increment()
            figures.readNanos.add(System.nanoTime() - start)
          case RocksDbHandle.Warmed.Cached | RocksDbHandle.Warmed.Absent => figures.cached.increment()
          case RocksDbHandle.Warmed.NotRead => stop()
        }
      } catch {
        case NonFatal(e) =>
          if (figures.failed.sum() == 0)
            logInfo(s"A read ahead of ${db.storeName} failed; the operator's read decides", e)
          figures.failed.increment()
      }
      k = keys.poll()
    }
    readers.decrementAndGet()
    // A key added after the poll above and before the decrement finds no reader: start one.
    if (!stopped && !keys.isEmpty && readers.get < inFlight) {
      readers.incrementAndGet()
      pool.execute(() => drain())
    }
  }
}

object VersionReadAhead {

  /** What one version's reads ahead did (the progress's ttlstoreReadAhead* metrics). */
  final class Figures {
    @volatile var asked = 0L
    val cached = new LongAdder
    val read = new LongAdder
    val readNanos = new LongAdder
    val failed = new LongAdder

    /** The time the operator's own point reads took while the node read ahead. */
    var operatorReadNanos = 0L

    def snapshot: ReadAheadFigures =
      ReadAheadFigures(asked, cached.sum(), read.sum(), failed.sum(), operatorReadNanos / 1000000L)
  }

  /**
   * The executor's readers, as many as the largest readAhead.threads asked (each version keeps at most its own in
   * flight): daemons that wait on I/O, idle ones ending after a minute. Made at the first read ahead.
   */
  private lazy val readers = new DaemonThreads.GrowingPool("read-ahead", idleSeconds = 60)
}
