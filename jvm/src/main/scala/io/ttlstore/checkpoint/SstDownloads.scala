package io.ttlstore.checkpoint

import java.io.{File, FileInputStream, InputStream, OutputStream}
import java.nio.file.Files
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicReference

import io.ttlstore.threads.DaemonThreads

/**
 * Puts a snapshot's SST files into a local directory: those a local file already holds are moved
 * into place, the others fetched several at a time. Object stores and HDFS
 * serve parallel streams far faster than one, so a store's load time no longer grows with its
 * state's size over one stream's bandwidth. All loads of one executor (JVM) share one bounded pool
 * of `downloadThreads` threads, so that many stores loading at once (a lost executor's stores
 * moving here) do not open hundreds of streams.
 *
 * Each file is written as a [[LocalAtomicFile]] (a temporary name beside its target), checked by the caller's `fetch`
 * (size, CRC32C) and only then renamed to its name: a download that fails or is damaged leaves no
 * file that a later load would trust. The first failure cancels the files not yet started; it is
 * thrown once the files under way have stopped, so that nothing writes into the directory after
 * the caller has moved on.
 */
object SstDownloads {

  /**
   * One file to fetch: `fetch` writes `target`'s bytes to the stream it is given, or throws; `placed` runs once the
   * file has its name (a lazily opened store then reads it locally).
   */
  final case class Download(target: File, fetch: OutputStream => Unit, placed: () => Unit = () => ())

  /** What a load's snapshot restore fetched, and the local files it took instead of fetching them. */
  final case class Fetched(files: Int, bytes: Long, reused: Int) {
    def +(other: Fetched): Fetched = Fetched(files + other.files, bytes + other.bytes, reused + other.reused)
  }

  object Fetched {
    val Zero: Fetched = Fetched(0, 0L, 0)

    /** A snapshot of `ssts` of which `fetch` are fetched and the others were reused. */
    def of(ssts: Seq[SstFile], fetch: Seq[SstFile]): Fetched =
      Fetched(fetch.size, fetch.map(_.sizeBytes).sum, ssts.size - fetch.size)
  }

  private val pool = new DaemonThreads.GrowingPool("download", idleSeconds = 30)

  // The downloads running in this JVM and the most that may. The gate holds the bound; the pool only
  // grows to the largest bound asked for (its idle threads time out), since a pool made smaller lets a
  // thread above its new size take one more task. The gate lets downloads in the order they came to it
  // (a ticket each): a thread back from a download would otherwise win the gate over one woken to take
  // it, and a download could wait behind all the others.
  private val gate = new Object
  private var running = 0
  private var limit = 1
  private var nextTicket = 0L
  private var serving = 0L

  /** The bound asked by the newest load (queries of one executor may differ). */
  private def bound(threads: Int): Unit = gate.synchronized {
    limit = math.max(1, threads)
    pool.atLeast(limit)
    gate.notifyAll()
  }

  // A ticket taken is always served (else every later one would wait for ever): an interrupt while
  // waiting is kept for the download, whose fetch then fails as interrupted.
  private def enter(): Unit = gate.synchronized {
    val ticket = nextTicket
    nextTicket += 1
    var interrupted = false
    while (ticket != serving || running >= limit)
      try gate.wait()
      catch { case _: InterruptedException => interrupted = true }
    serving += 1
    running += 1
    gate.notifyAll()
    if (interrupted) Thread.currentThread().interrupt()
  }

  private def leave(): Unit = gate.synchronized {
    running -= 1
    gate.notifyAll()
  }

  /**
   * Puts a snapshot's SST files into `targetDir`: one in `reusable` (by local name) with the size and
   * CRC32C the snapshot recorded is moved into place, the others are fetched, `threads` at a time.
   * `open` opens one in the checkpoint, with the error that names it as damaged (given the detail).
   */
  def fill(targetDir: File, ssts: Seq[SstFile], threads: Int, reusable: Map[String, File])(
      open: SstFile => (InputStream, String => Exception)): Fetched = {
    val fetch = reuse(targetDir, ssts, reusable)
    run(downloads(targetDir, fetch)(open), threads)
    Fetched.of(ssts, fetch)
  }

  /**
   * A download of each of `ssts` into `targetDir` under its local name, checked against the size and CRC32C the
   * snapshot recorded; `placed` runs with each file once it has its name.
   */
  def downloads(targetDir: File, ssts: Seq[SstFile], placed: File => Unit = _ => ())(
      open: SstFile => (InputStream, String => Exception)): Seq[Download] =
    ssts.map { sst =>
      val target = new File(targetDir, sst.localName)
      Download(target, out => copy(sst, out, open), () => placed(target))
    }

  /**
   * Moves the SST files of `ssts` that `reusable` holds (by local name, with the size and CRC32C the snapshot
   * recorded) into `targetDir`; returns those it did not.
   */
  def reuse(targetDir: File, ssts: Seq[SstFile], reusable: Map[String, File]): Seq[SstFile] = {
    val (reused, rest) = ssts.partition(sst => reusable.get(sst.localName).exists(holds(_, sst)))
    reused.foreach(sst => Files.move(reusable(sst.localName).toPath, new File(targetDir, sst.localName).toPath))
    rest
  }

  /** True if the local file `f` has the size and CRC32C the snapshot recorded for `sst`. */
  private def holds(f: File, sst: SstFile): Boolean =
    f.length() == sst.sizeBytes && Streams.copyWithCrc(new FileInputStream(f), OutputStream.nullOutputStream())
      ._2 == sst.crc32c

  /** Copies `sst` to `out`, checking its size and CRC32C against what the snapshot recorded. */
  private def copy(sst: SstFile, out: OutputStream, open: SstFile => (InputStream, String => Exception)): Unit = {
    val (in, damaged) = open(sst)
    val (size, crc) = Streams.copyWithCrc(in, out)
    if (size != sst.sizeBytes) throw damaged(s"$size bytes where the snapshot recorded ${sst.sizeBytes}")
    if (crc != sst.crc32c) throw damaged("checksum mismatch")
  }

  /**
   * Runs every download, at most `threads` at once across this JVM; returns when all are in place.
   * Throws the first failure (as thrown by its `fetch`) once no download of this call runs.
   */
  def run(downloads: Seq[Download], threads: Int): Unit = start(downloads, threads).await()

  /** Starts every download as [[run]] does, and returns at once: [[Pending.await]] waits for them. */
  def start(downloads: Seq[Download], threads: Int): Pending = {
    val pending = new Pending(downloads.size)
    if (downloads.nonEmpty) bound(threads)
    downloads.foreach { d =>
      pool.execute(() =>
        try place(d, pending)
        catch { case e: Throwable => pending.first.compareAndSet(null, e) }
        finally pending.done.countDown())
    }
    pending
  }

  /** Downloads under way. */
  final class Pending private[SstDownloads] (count: Int) {
    // Every download counts down once it ran, failed, or was skipped after a failure: a count, not
    // Future.get, which a cancelled future answers while its download still runs.
    private[SstDownloads] val first = new AtomicReference[Throwable]()
    private[SstDownloads] val done = new CountDownLatch(count)

    /** True once every download is in place, failed, or was skipped after a failure. */
    def isDone: Boolean = done.getCount == 0

    /** The first failure so far. */
    def failure: Option[Throwable] = Option(first.get)

    /** Skips the downloads not yet started, and waits for those under way (a store closing its DB). */
    def cancel(): Unit = stop(new java.util.concurrent.CancellationException("the store closed"))

    /**
     * Skips the downloads not yet started (`why` is their failure, unless one failed before) and returns once those
     * under way have stopped, an interrupt meanwhile kept for the caller.
     */
    private def stop(why: Throwable): Unit = {
      first.compareAndSet(null, why)
      var interrupted = false
      while (done.getCount > 0)
        try done.await()
        catch { case _: InterruptedException => interrupted = true }
      if (interrupted) Thread.currentThread().interrupt()
    }

    /** Returns when every download is in place; else throws the first failure once none runs any more. */
    def await(): Unit = {
      try done.await()
      catch {
        case e: InterruptedException =>
          // The task was killed: what has not started is skipped, and the caller's cleanup sees no writer.
          stop(e)
          Thread.currentThread().interrupt()
          throw e
      }
      Option(first.get).foreach(throw _)
    }
  }

  /**
   * Downloads into a [[LocalAtomicFile]]: it takes the target's name only once `fetch` returned. A download
   * that comes through the gate after one of its call failed does not start; a failure is recorded before
   * its download leaves the gate, so no download of the call starts after it but those already through.
   */
  private def place(d: Download, pending: Pending): Unit = {
    enter()
    try {
      if (pending.first.get == null) {
        val out = LocalAtomicFile.create(d.target.toPath)
        try d.fetch(out)
        catch {
          case e: Throwable =>
            out.cancel()
            pending.first.compareAndSet(null, e)
            throw e
        }
        out.close()
        d.placed()
      }
    } finally leave()
  }
}
