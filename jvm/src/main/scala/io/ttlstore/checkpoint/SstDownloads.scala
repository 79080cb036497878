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
 * moving here) do not open hundreds of streams; what a load waits for goes before what comes down
 * in the background ([[Urgency]]).
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

  /**
   * Whether a caller waits for a download. [[Waited]]: the files a load needs before its DB opens, and the changelogs
   * it replays. [[Background]]: the files a store opened first brings down while it reads them, and the ones remote
   * mode keeps local; these wait while any waited download is queued, since a load queued behind another store's
   * background files would wait for them (measured at 8 GB over 16 stores, two executors: a lazily opened store's
   * replay waited up to 2.5 s for the changelogs it had asked for, behind the earlier stores' SST files).
   */
  sealed trait Urgency
  case object Waited extends Urgency
  case object Background extends Urgency

  private val pool = new DaemonThreads.GrowingPool("download", idleSeconds = 30)

  // The downloads queued and running in this JVM, and the most that may run: waited ones up to the bound whatever
  // else runs, background ones while no waited one is queued and all together stay within the bound (so at most
  // twice the bound at once, while waited ones pass background ones under way). Each queue is served in the order
  // its downloads came. The pool only grows to the largest bound asked for (its idle threads time out), since a
  // pool made smaller lets a thread above its new size take one more task.
  private val gate = new Object
  private val waitedQueue = new java.util.ArrayDeque[Job]()
  private val backgroundQueue = new java.util.ArrayDeque[Job]()
  private var runningWaited = 0
  private var runningBackground = 0
  private var limit = 1

  private final class Job(val download: Download, val pending: Pending, val urgency: Urgency)

  /** Under the gate: starts what the bound lets run, waited downloads first. */
  private def dispatch(): Unit = {
    while (!waitedQueue.isEmpty && runningWaited < limit) launch(waitedQueue.removeFirst())
    while (waitedQueue.isEmpty && !backgroundQueue.isEmpty && runningWaited + runningBackground < limit) {
      launch(backgroundQueue.removeFirst())
    }
  }

  private def launch(job: Job): Unit = {
    if (job.urgency == Waited) runningWaited += 1 else runningBackground += 1
    pool.execute(() =>
      try place(job.download, job.pending)
      catch { case e: Throwable => job.pending.first.compareAndSet(null, e) }
      finally {
        job.pending.done.countDown()
        gate.synchronized {
          if (job.urgency == Waited) runningWaited -= 1 else runningBackground -= 1
          dispatch()
        }
      })
  }

  /** Takes `pending`'s downloads that have not started out of the queues, each counted as done. */
  private def dropQueued(pending: Pending): Unit = gate.synchronized {
    Seq(waitedQueue, backgroundQueue).foreach(_.removeIf { job =>
      val mine = job.pending eq pending
      if (mine) pending.done.countDown()
      mine
    })
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

  /**
   * Starts every download as [[run]] does, and returns at once: [[Pending.await]] waits for them. `urgency`: whether
   * a caller waits for them ([[Urgency]]).
   */
  def start(downloads: Seq[Download], threads: Int, urgency: Urgency = Waited): Pending = {
    val pending = new Pending(downloads.size)
    if (downloads.nonEmpty) gate.synchronized {
      // The bound asked by the newest load (queries of one executor may differ).
      limit = math.max(1, threads)
      pool.atLeast(2 * limit)
      val queue = if (urgency == Waited) waitedQueue else backgroundQueue
      downloads.foreach(d => queue.addLast(new Job(d, pending, urgency)))
      dispatch()
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
      dropQueued(this)
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
   * Downloads into a [[LocalAtomicFile]]: it takes the target's name only once `fetch` returned. A download that
   * starts after one of its call failed does nothing; a failure is recorded before its download ends, so no download
   * of the call starts after it but those already under way.
   */
  private def place(d: Download, pending: Pending): Unit =
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
}
