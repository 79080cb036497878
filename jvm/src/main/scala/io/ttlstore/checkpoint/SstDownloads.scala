package io.ttlstore.checkpoint

import java.io.{File, FileInputStream, FileOutputStream, InputStream, OutputStream}
import java.nio.file.{Files, StandardCopyOption}
import java.util.concurrent.{CancellationException, ExecutionException, Future, LinkedBlockingQueue, ThreadFactory, ThreadPoolExecutor, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

/**
 * Puts a snapshot's SST files into a local directory: those a local file already holds are moved
 * into place, the others fetched several at a time. Object stores and HDFS
 * serve parallel streams far faster than one, so a store's load time no longer grows with its
 * state's size over one stream's bandwidth. All loads of one executor (JVM) share one bounded pool
 * of `downloadThreads` threads, so that many stores loading at once (a lost executor's stores
 * moving here) do not open hundreds of streams.
 *
 * Each file is written under a temporary name beside its target, checked by the caller's `fetch`
 * (size, CRC32C) and only then renamed to its name: a download that fails or is damaged leaves no
 * file that a later load would trust. The first failure cancels the files not yet started; it is
 * thrown once the files under way have stopped, so that nothing writes into the directory after
 * the caller has moved on.
 */
object SstDownloads {

  /** One file to fetch: `fetch` writes `target`'s bytes to the file it is given, or throws. */
  final case class Download(target: File, fetch: File => Unit)

  /** What a load's snapshot restore fetched, and the local files it took instead of fetching them. */
  final case class Fetched(files: Int, bytes: Long, reused: Int) {
    def +(other: Fetched): Fetched = Fetched(files + other.files, bytes + other.bytes, reused + other.reused)
  }

  object Fetched {
    val Zero: Fetched = Fetched(0, 0L, 0)
  }

  private val pool: ThreadPoolExecutor = {
    val count = new AtomicInteger()
    val threads: ThreadFactory = r => {
      val t = new Thread(r, s"ttlstore-download-${count.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
    val p = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue[Runnable](), threads)
    p.allowCoreThreadTimeOut(true)
    p
  }

  // The downloads running in this JVM and the most that may: the pool's threads follow the bound, but a
  // pool made smaller lets a thread above the new size take one more task, so the gate holds it.
  private val gate = new Object
  private var running = 0
  private var limit = 1

  /** The bound asked by the newest load (queries of one executor may differ): the gate's, and the pool's size. */
  private def bound(threads: Int): Unit = gate.synchronized {
    val n = math.max(1, threads)
    limit = n
    if (n > pool.getMaximumPoolSize) { pool.setMaximumPoolSize(n); pool.setCorePoolSize(n) }
    else if (n < pool.getMaximumPoolSize) { pool.setCorePoolSize(n); pool.setMaximumPoolSize(n) }
    gate.notifyAll()
  }

  private def enter(): Unit = gate.synchronized {
    while (running >= limit) gate.wait()
    running += 1
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
    val (reused, fetch) = ssts.partition(sst => reusable.get(sst.localName).exists(holds(_, sst)))
    reused.foreach(sst => Files.move(reusable(sst.localName).toPath, new File(targetDir, sst.localName).toPath))
    run(fetch.map(sst => Download(new File(targetDir, sst.localName), into => copy(sst, into, open))), threads)
    Fetched(fetch.size, fetch.map(_.sizeBytes).sum, reused.size)
  }

  /** True if the local file `f` has the size and CRC32C the snapshot recorded for `sst`. */
  private def holds(f: File, sst: SstFile): Boolean =
    f.length() == sst.sizeBytes && Streams.copyWithCrc(new FileInputStream(f), OutputStream.nullOutputStream())
      ._2 == sst.crc32c

  /** Copies `sst` into `into`, checking its size and CRC32C against what the snapshot recorded. */
  private def copy(sst: SstFile, into: File, open: SstFile => (InputStream, String => Exception)): Unit = {
    val (in, damaged) = open(sst)
    val out = new FileOutputStream(into)
    val (size, crc) =
      try Streams.copyWithCrc(in, out)
      finally out.close()
    if (size != sst.sizeBytes) throw damaged(s"$size bytes where the snapshot recorded ${sst.sizeBytes}")
    if (crc != sst.crc32c) throw damaged("checksum mismatch")
  }

  /**
   * Runs every download, at most `threads` at once across this JVM; returns when all are in place.
   * Throws the first failure (as thrown by its `fetch`) once no download of this call runs.
   */
  def run(downloads: Seq[Download], threads: Int): Unit = {
    if (downloads.isEmpty) return
    bound(threads)
    @volatile var failed = false
    val futures: Seq[Future[_]] = downloads.map { d =>
      pool.submit(new Runnable {
        override def run(): Unit = if (!failed) {
          try place(d)
          catch { case e: Throwable => failed = true; throw e }
        }
      })
    }
    var first: Option[Throwable] = None
    try {
      futures.foreach { f =>
        try f.get()
        catch {
          case e: ExecutionException => if (first.isEmpty) first = Some(e.getCause); futures.foreach(_.cancel(false))
          case _: CancellationException => ()
        }
      }
    } catch {
      case e: InterruptedException =>
        // The task was killed: stop what has not started, and let the caller's cleanup see no writer.
        failed = true
        futures.foreach(_.cancel(false))
        futures.foreach(f =>
          try f.get()
          catch { case _: Exception => () })
        Thread.currentThread().interrupt()
        throw e
    }
    first.foreach(throw _)
  }

  /** Downloads into a temporary file beside the target, then renames it into place. */
  private def place(d: Download): Unit = {
    val temporary = new File(d.target.getParentFile, s".${d.target.getName}.downloading")
    enter()
    try {
      d.fetch(temporary)
      Files.move(temporary.toPath, d.target.toPath, StandardCopyOption.ATOMIC_MOVE)
    } finally {
      Files.deleteIfExists(temporary.toPath)
      leave()
    }
  }
}
