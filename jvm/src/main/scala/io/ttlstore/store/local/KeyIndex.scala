package io.ttlstore.store.local

import java.util.concurrent.{CountDownLatch, ExecutorService, Executors}
import java.util.concurrent.atomic.AtomicInteger

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.ttlstore.store.rocksdb.{CheckedIterator, RocksDbHandle}
import io.ttlstore.threads.DaemonThreads

/**
 * Which keys the local DB's timestamped family certainly does not hold, answered on the JVM heap: a
 * [[KeyBloom]] over every key the DB may hold, so that a read of a new key (deduplication's and
 * aggregation's commonest read while a stream brings new keys) costs a few probes instead of a
 * RocksDB point read that searches the memtables and the files' filters through JNI (measured: such
 * misses took more of a new-key deduplication's task time than its puts).
 *
 * The index is kept a superset of the DB's keys: every write of a key adds it ([[added]]); deletes,
 * expiry and the native filter's drops leave it a superset, which only costs a point read. It serves
 * from a load that starts from the empty state (changelogs replayed into it add their keys); a DB
 * restored from a snapshot gets one from a scan in the background, started at a commit ([[committed]])
 * on an iterator taken then, the writes after it kept aside and added when the scan ends. The same
 * scan replaces an index whose keys are mostly gone (more than twice the rows): memory stays about
 * 1.25 bytes per stored key. Until then reads go to RocksDB, as without it. Where nearly every key read is
 * stored (a steady deduplication, an aggregation's updates), most reads skip the index ([[KeyIndexUse]]).
 *
 * No scan where it would read files that are not local (lazy hydration, remote mode, where an index
 * whose keys are mostly gone is dropped instead). Used by the
 * task's thread alone; the scan runs in one JVM-wide daemon thread and is stopped ([[forget]])
 * before the DB it reads closes.
 */
final class KeyIndex(scans: Boolean) extends Logging {
  import KeyIndex._

  private var bloom: KeyBloom = _
  private var build: Build = _
  private val use = new KeyIndexUse

  /**
   * True if the DB certainly holds no row for `key`. False says nothing: no index serves, or this read
   * does not ask it, since lately it found nearly every key it was asked for ([[KeyIndexUse]]).
   */
  def certainlyAbsent(key: Array[Byte]): Boolean = {
    if (build != null && build.done) settle()
    bloom != null && use.ask() && use.answered(!bloom.mightContain(key))
  }

  /** A write gave `key` a row (a replayed put: the key may have had one). */
  def added(key: Array[Byte]): Unit = {
    if (bloom != null) bloom.add(key)
    kept(key)
  }

  /** A write gave `key` a row where the DB held none. */
  def addedNew(key: Array[Byte]): Unit = {
    if (bloom != null) bloom.addNew(key)
    kept(key)
  }

  private def kept(key: Array[Byte]): Unit =
    if (build != null) {
      build.pending += key
      if (build.pending.size > MaxPending) stopBuild()
    }

  /** True while an index serves (for tests and figures). */
  def serving: Boolean = bloom != null

  /** True while every read asks the index that serves, not one in [[KeyIndexUse.SampleEvery]] (for tests). */
  def askedByEveryRead: Boolean = serving && use.askingEveryRead

  /** Heap bytes of the index's Blooms, the one serving and the one being built. */
  def bytes: Long = (if (bloom != null) bloom.bytes else 0L) + (if (build != null) build.bytes else 0L)

  /** The DB was just opened empty: an empty index serves. */
  def startEmpty(): Unit = {
    forget()
    bloom = new KeyBloom()
  }

  /** The DB changes otherwise (a restore, a close): no index, and a running scan is stopped. */
  def forget(): Unit = {
    stopBuild()
    bloom = null
  }

  /**
   * After a commit of `db` that left `rows` rows: starts a scan of it if no index serves or the one
   * serving holds more than twice as many keys as there are rows, and its files are all local. Where
   * no scan may ever run (remote mode), such an index is dropped and `db` is not read.
   */
  def committed(rows: Long, db: RocksDbHandle): Unit = {
    val stale = bloom != null && bloom.keys > 2 * rows + KeyBloom.FirstCapacity
    if (stale && !scans) bloom = null
    else if (scans && build == null && rows > 0 && (bloom == null || stale) && !db.hydrating) {
      build = new Build(db.newIterator(), rows)
    }
  }

  private def settle(): Unit = {
    val done = build
    build = null
    try {
      val built = done.built
      done.pending.foreach(built.add)
      bloom = built
    } catch {
      case NonFatal(e) => logWarning("Could not build the index of the keys a store holds; its reads ask RocksDB", e)
    }
  }

  private def stopBuild(): Unit = if (build != null) {
    build.stop()
    build = null
  }
}

object KeyIndex {

  /** Writes kept aside while a scan runs; a scan this far behind is dropped (and tried again at a commit). */
  val MaxPending = 1 << 20

  private lazy val scanner: ExecutorService = Executors.newSingleThreadExecutor(DaemonThreads.factory("key-index"))

  /** A scan of the keys an iterator sees into a new Bloom, sized for `rows`. */
  private final class Build(it: CheckedIterator, rows: Long) {
    val pending = new ArrayBuffer[Array[Byte]]()
    // Queued, then running or stopped before it ran; `ended` opens once the iterator is closed.
    private val state = new AtomicInteger(Queued)
    private val ended = new CountDownLatch(1)
    @volatile private var bloom: KeyBloom = _
    @volatile private var failure: Throwable = _

    scanner.execute(new Runnable {
      override def run(): Unit = if (state.compareAndSet(Queued, Running)) {
        try {
          val f =
            new KeyBloom(math.max(KeyBloom.FirstCapacity.toLong, math.min(rows, KeyBloom.MaxPartCapacity.toLong)).toInt)
          bloom = f
          it.seekToFirst()
          var n = 0
          while (it.isValid && !(n % 4096 == 0 && state.get == Stopping)) {
            f.add(it.key())
            it.next()
            n += 1
          }
        } catch {
          case NonFatal(e) => failure = e
        } finally {
          it.close()
          ended.countDown()
        }
      }
    })

    def done: Boolean = ended.getCount == 0

    /** The index built (after [[done]]); throws what the scan failed with. */
    def built: KeyBloom = {
      if (failure != null) throw failure
      bloom
    }

    def bytes: Long = Option(bloom).map(_.bytes).getOrElse(0L)

    /** Stops the scan and returns once its iterator is closed. */
    def stop(): Unit =
      if (state.compareAndSet(Queued, Stopping)) it.close()
      else {
        state.set(Stopping)
        ended.await()
      }
  }

  private val Queued = 0
  private val Running = 1
  private val Stopping = 2
}
