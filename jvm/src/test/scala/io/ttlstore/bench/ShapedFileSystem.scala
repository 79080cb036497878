package io.ttlstore.bench

import java.io.OutputStream
import java.net.URI

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FSDataOutputStream, FSInputStream, FileStatus, Path, RawLocalFileSystem}
import org.apache.hadoop.fs.permission.FsPermission
import org.apache.hadoop.util.Progressable

/**
 * The local disk as an object store serves it, under the scheme `shaped://` (`make bench-recovery`,
 * bench/recovery.py): every request (an open, a positioned read, a listing, a status, a create, a rename, a delete) waits
 * a first-byte latency, and the bytes of each stream flow at most at a stream's bandwidth, all streams of
 * the process together at most at the process's (an executor's network is shared). Multi-GB state does
 * not fit the in-memory S3 server the tests use; this shapes real files instead.
 *
 * Settings (Hadoop's, so `spark.hadoop.` in Spark): `fs.shaped.latencyMs` (default 30),
 * `fs.shaped.streamMBps` (64) and `fs.shaped.processMBps` (256), in MB of 10^6 bytes.
 */
final class ShapedFileSystem extends RawLocalFileSystem {
  import ShapedFileSystem._

  private var latencyMs = 30L
  private var stream = 64e6

  override def getUri: URI = URI.create("shaped:///")
  override def getScheme: String = "shaped"

  override def initialize(uri: URI, conf: Configuration): Unit = {
    super.initialize(uri, conf)
    latencyMs = conf.getLong("fs.shaped.latencyMs", 30L)
    stream = conf.getDouble("fs.shaped.streamMBps", 64) * 1e6
    process.setRate(conf.getDouble("fs.shaped.processMBps", 256) * 1e6)
  }

  /** One request: the latency once, however many calls of this file system serve it. */
  private def request[T](body: => T): T =
    if (inRequest.get) body
    else {
      inRequest.set(true)
      try { Thread.sleep(latencyMs); body }
      finally inRequest.set(false)
    }

  override def open(f: Path, bufferSize: Int): FSDataInputStream =
    request(new FSDataInputStream(new ShapedInput(super.open(f, bufferSize), new Throttle(stream), latencyMs)))

  override def create(f: Path, permission: FsPermission, overwrite: Boolean, bufferSize: Int, replication: Short,
      blockSize: Long, progress: Progressable): FSDataOutputStream = request {
    val out = super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress)
    new FSDataOutputStream(new ShapedOutput(out, new Throttle(stream)), null)
  }

  override def getFileStatus(f: Path): FileStatus = request(super.getFileStatus(f))
  override def listStatus(f: Path): Array[FileStatus] = request(super.listStatus(f))
  override def mkdirs(f: Path, permission: FsPermission): Boolean = request(super.mkdirs(f, permission))
  override def rename(src: Path, dst: Path): Boolean = request(super.rename(src, dst))
  override def delete(p: Path, recursive: Boolean): Boolean = request(super.delete(p, recursive))
}

object ShapedFileSystem {
  private val inRequest = ThreadLocal.withInitial[java.lang.Boolean](() => false)

  /** The process's bandwidth, shared by all its streams. */
  private val process = new Throttle(256e6)

  /** Waits until `n` more bytes of a stream are paid for on both the stream's and the process's budget. */
  private def pass(own: Throttle, n: Int): Unit =
    if (n > 0) {
      val until = math.max(own.reserve(n), process.reserve(n))
      val wait = until - System.nanoTime()
      if (wait > 0) Thread.sleep(wait / 1000000, (wait % 1000000).toInt)
    }

  /**
   * A bandwidth as a reservation: each transfer takes the next `n / rate` seconds of it, after the
   * transfers before it; an idle budget gives no credit (no burst).
   */
  private final class Throttle(private var rate: Double) {
    private var next = System.nanoTime()

    def setRate(r: Double): Unit = synchronized { rate = r }

    /** When the `n` bytes reserved now are paid for (System.nanoTime). */
    def reserve(n: Int): Long = synchronized {
      next = math.max(System.nanoTime(), next) + (n / rate * 1e9).toLong
      next
    }
  }

  private final class ShapedInput(in: FSDataInputStream, own: Throttle, latencyMs: Long) extends FSInputStream {
    override def read(): Int = { val b = in.read(); if (b >= 0) pass(own, 1); b }
    override def read(buf: Array[Byte], off: Int, len: Int): Int = { val n = in.read(buf, off, len); pass(own, n); n }
    // A positioned read is a request of its own (a ranged GET, as s3a's random reads are), served beside the
    // stream's other reads.
    override def read(position: Long, buf: Array[Byte], off: Int, len: Int): Int = {
      Thread.sleep(latencyMs)
      val n = in.read(position, buf, off, len)
      if (n > 0) pass(own, n)
      n
    }
    override def seek(pos: Long): Unit = in.seek(pos)
    override def getPos: Long = in.getPos
    override def seekToNewSource(targetPos: Long): Boolean = false
    override def available(): Int = in.available()
    override def close(): Unit = in.close()
  }

  private final class ShapedOutput(out: OutputStream, own: Throttle) extends OutputStream {
    override def write(b: Int): Unit = { pass(own, 1); out.write(b) }
    override def write(buf: Array[Byte], off: Int, len: Int): Unit = { pass(own, len); out.write(buf, off, len) }
    override def flush(): Unit = out.flush()
    override def close(): Unit = out.close()
  }
}
