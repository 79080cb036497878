package io.ttlstore

import java.io.FileNotFoundException
import java.net.{ConnectException, URI}
import java.util.concurrent.atomic.AtomicInteger
import java.util.function.Consumer

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FSInputStream, FileStatus, Path, RawLocalFileSystem}

/**
 * The local file system under the scheme `hooked://`, which runs a test's hook just before it opens
 * a file: the test steps in between a reader's listing and its reads, as another process would. And
 * once a test took it down ([[HookedFileSystem.downFrom]]), it refuses every open and listing, as a file
 * system that stopped answering does. A positioned read of a file deleted since it was opened fails, as an object
 * store's ranged GET does (a local file stays readable through an open stream).
 */
final class HookedFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("hooked:///")
  override def getScheme: String = "hooked"

  override def open(f: Path, bufferSize: Int): FSDataInputStream = {
    // Hadoop may load this class in another class loader than the test's: the hook is found
    // through the JVM's system properties, as a plain Java interface.
    refuseWhileDown()
    System.getProperties.get(HookedFileSystem.Key) match {
      case hook: Consumer[Path @unchecked] => hook.accept(f)
      case _ =>
    }
    new FSDataInputStream(new HookedFileSystem.ObjectRead(super.open(f, bufferSize), f, () => exists(f)))
  }

  override def listStatus(f: Path): Array[FileStatus] = {
    System.getProperties.get(HookedFileSystem.ListKey) match {
      case hook: Consumer[Path @unchecked] => hook.accept(f)
      case _ =>
    }
    refuseWhileDown()
    super.listStatus(f)
  }

  private def refuseWhileDown(): Unit =
    if (System.getProperties.containsKey(HookedFileSystem.DownKey)) throw new ConnectException("Connection refused")
}

object HookedFileSystem {

  /** `in`, the stream of `path`, whose positioned reads fail once the file is gone. */
  private final class ObjectRead(in: FSDataInputStream, path: Path, exists: () => Boolean) extends FSInputStream {
    override def seek(pos: Long): Unit = in.seek(pos)
    override def getPos: Long = in.getPos
    override def seekToNewSource(targetPos: Long): Boolean = false
    override def read(): Int = in.read()
    override def read(b: Array[Byte], off: Int, len: Int): Int = in.read(b, off, len)
    override def read(position: Long, buffer: Array[Byte], offset: Int, length: Int): Int = {
      found()
      in.read(position, buffer, offset, length)
    }
    override def readFully(position: Long, buffer: Array[Byte], offset: Int, length: Int): Unit = {
      found()
      in.readFully(position, buffer, offset, length)
    }
    override def available(): Int = in.available()
    override def close(): Unit = in.close()
    private def found(): Unit = if (!exists()) throw new FileNotFoundException(s"$path: no such file")
  }
  private val Key = "io.ttlstore.test.hookedFileSystem"
  private val DownKey = "io.ttlstore.test.hookedFileSystem.down"
  private val ListKey = "io.ttlstore.test.hookedFileSystem.list"
  private val firedCount = new AtomicInteger

  /** A Hadoop configuration that serves `hooked://` by this file system. */
  def conf: Configuration = {
    val c = new Configuration()
    c.set("fs.hooked.impl", classOf[HookedFileSystem].getName)
    c.setBoolean("fs.hooked.impl.disable.cache", true)
    c
  }

  /** `dir` as a `hooked://` location. */
  def location(dir: java.io.File): String = s"hooked://${dir.getAbsolutePath}"

  /** Runs `body` once, before the first open of a file that `matching` accepts. */
  def once(matching: Path => Boolean)(body: => Unit): Unit = {
    lazy val hook: Consumer[Path] = (f: Path) =>
      if (matching(f) && System.getProperties.remove(Key, hook)) {
        firedCount.incrementAndGet()
        body
      }
    System.getProperties.put(Key, hook)
  }

  /** Runs `body` with `hook` run before every open of a file, in the opening thread. */
  def whileOpening[T](hook: Path => Unit)(body: => T): T = {
    val consumer: Consumer[Path] = (f: Path) => hook(f)
    System.getProperties.put(Key, consumer)
    try body
    finally System.getProperties.remove(Key, consumer)
  }

  /** How often a hook ran since the JVM started. */
  def fired: Int = firedCount.get

  /**
   * Runs `body`, the file system going down once it opened the first file that `matching` accepts:
   * that file is served, and from then on until `body` ends every open and listing is refused.
   */
  def downFrom[T](matching: Path => Boolean)(body: => T): T = {
    once(matching)(System.setProperty(DownKey, "true"))
    try body
    finally {
      System.getProperties.remove(Key)
      System.clearProperty(DownKey)
    }
  }

  /**
   * Runs `body`, the file system going down at the `n`th listing of a directory that `matching`
   * accepts: that listing is refused, and every open and listing after it until `body` ends.
   */
  def downAtListing[T](n: Int, matching: Path => Boolean)(body: => T): T = {
    val seen = new AtomicInteger
    val hook: Consumer[Path] = (f: Path) =>
      if (matching(f) && seen.incrementAndGet() == n) System.setProperty(DownKey, "true")
    System.getProperties.put(ListKey, hook)
    try body
    finally {
      System.getProperties.remove(ListKey)
      System.clearProperty(DownKey)
    }
  }

  /** Runs `body`, `hook` running just before every open (on the opening thread) until `body` ends. */
  def onEveryOpen[T](hook: Path => Unit)(body: => T): T = {
    val consumer: Consumer[Path] = (f: Path) => hook(f)
    System.getProperties.put(Key, consumer)
    try body
    finally System.getProperties.remove(Key)
  }
}
