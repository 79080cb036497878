package io.ttlstore.checkpoint

import java.io.{BufferedOutputStream, OutputStream}
import java.nio.file.{Files, Path => JPath, Paths, StandardCopyOption, StandardOpenOption}
import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * Atomic files in a checkpoint on the local file system, written without Hadoop's local file system.
 *
 * Spark's CheckpointFileManager makes a file visible with Hadoop's `rename`, which on the local file
 * system asks for the link status of the paths by running `readlink` in a new process whenever
 * Hadoop's native library is absent (the pyspark wheel has none): 40-90 ms per file on this
 * repository's machine, paid by every commit of every store (a flight recording of an aggregation's
 * commits had them in `Shell.runCommand` under `FileContext.rename`). Here a file is written beside
 * its target under a temporary name and renamed with rename(2), which replaces the target
 * atomically; nothing forks.
 *
 * Hadoop keeps a checksum file `.<name>.crc` beside files it writes; one left by an earlier writer
 * of the same name is deleted before the rename, so Hadoop's readers never check the new bytes
 * against the old checksum (a crash in between leaves the old file without checksum, still
 * readable). Temporary files are named as Spark's (`.<name>.<uuid>.tmp`).
 */
object LocalAtomicFile {

  /** Spark's setting that picks another checkpoint file manager; when set, Spark's manager is used. */
  val ManagerClassKey = "spark.sql.streaming.checkpointFileManagerClass"

  /** The Hadoop setting that gives `file:` paths a file system of the user's choice. */
  val LocalFileSystemKey = "fs.file.impl"

  /**
   * True if files under `root` can be written here: `root` is on the local file system (`file:`;
   * with pyspark's jars Hadoop reaches it through Hive's `ProxyLocalFileSystem`, a thin wrapper of
   * its own), and neither another file system for `file:` nor another checkpoint file manager is
   * configured.
   */
  def applies(root: Path, conf: Configuration): Boolean =
    conf.get(ManagerClassKey) == null && conf.get(LocalFileSystemKey) == null &&
      root.getFileSystem(conf).getScheme == "file"

  /** The local file of a path on Hadoop's local file system. */
  def localPath(path: Path, conf: Configuration): JPath =
    Paths.get(path.getFileSystem(conf).makeQualified(path).toUri)

  /** A file visible as `target` once the stream is closed; [[Stream.cancel]] leaves nothing. */
  def create(target: JPath): Stream = new Stream(target)

  final class Stream private[LocalAtomicFile] (target: JPath) extends OutputStream {
    private val temp = target.resolveSibling(s".${target.getFileName}.${UUID.randomUUID()}.tmp")
    private val out = new BufferedOutputStream(
      Files.newOutputStream(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), 65536)
    private var finished = false

    override def write(b: Int): Unit = out.write(b)
    override def write(b: Array[Byte], off: Int, len: Int): Unit = out.write(b, off, len)
    override def flush(): Unit = out.flush()

    /** Publishes the file under its name (once; later calls do nothing). */
    override def close(): Unit = if (!finished) {
      finished = true
      try {
        out.close()
        Files.deleteIfExists(target.resolveSibling(s".${target.getFileName}.crc"))
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE)
      } catch {
        case e: Throwable =>
          Files.deleteIfExists(temp)
          throw e
      }
    }

    /** Drops the file: nothing becomes visible, the temporary file is deleted. */
    def cancel(): Unit = if (!finished) {
      finished = true
      try out.close()
      finally Files.deleteIfExists(temp)
    }
  }
}
