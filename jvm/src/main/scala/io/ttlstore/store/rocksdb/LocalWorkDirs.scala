package io.ttlstore.store.rocksdb

import java.io.File
import java.net.InetAddress
import java.nio.charset.StandardCharsets
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.Try
import scala.util.hashing.MurmurHash3

import org.apache.commons.io.FileUtils
import org.apache.spark.SparkEnv
import org.apache.spark.internal.Logging

/**
 * The local working directories of this JVM's stores. A store deletes its own on `close`, but Spark
 * does not close every provider when an executor or driver exits, and the directories live under
 * the shared local root (not under Spark's per-application temporary directory, which Spark deletes
 * itself): a shutdown hook deletes whatever is still registered, so working copies never pile up.
 *
 * A process killed with SIGKILL runs no hook. So each directory's name carries its owner (a hash of
 * the host name, the process id and the process's start time,
 * `ttlstore-<host>-<pid>-<startMs>-<uuid>`), and the first directory this JVM makes under a root
 * removes the directories there whose owner no longer runs: same host, and no process with that id,
 * or one that started at another time (the id was reused). Directories of other hosts (a local
 * root shared between containers), of processes that still run, and of another form are left alone.
 */
object LocalWorkDirs extends Logging {

  /** Who made a working directory: a host (hashed), a process id and that process's start time. */
  final case class Owner(host: String, pid: Long, startMs: Long)

  private val live = ConcurrentHashMap.newKeySet[File]()
  private val swept = ConcurrentHashMap.newKeySet[File]()
  private lazy val hook: Unit = {
    sys.addShutdownHook { live.forEach(d => FileUtils.deleteQuietly(d)) }
    ()
  }

  private val Prefix = "ttlstore-"
  private val Named = """ttlstore-([0-9a-f]{8})-(\d+)-(\d+)-[0-9a-f-]{36}""".r

  /** This JVM as the owner of its directories. */
  lazy val self: Owner = {
    val process = ProcessHandle.current()
    Owner(hostHash(Try(InetAddress.getLocalHost.getHostName).getOrElse("localhost")), process.pid(),
      startMs(process).getOrElse(0L))
  }

  def hostHash(hostName: String): String =
    f"${MurmurHash3.bytesHash(hostName.getBytes(StandardCharsets.UTF_8))}%08x"

  /** A directory name of `owner`'s. */
  def name(owner: Owner, id: UUID): String = s"$Prefix${owner.host}-${owner.pid}-${owner.startMs}-$id"

  /** The owner a directory name records; None for any other name (ttlstore before owners, other files). */
  def ownerOf(dirName: String): Option[Owner] = dirName match {
    case Named(host, pid, start) => Try(Owner(host, pid.toLong, start.toLong)).toOption
    case _ => None
  }

  /**
   * Whether a directory of `owner`'s is abandoned, as seen from `self`: on this host, and its process
   * is gone or is another one of the same id (`startOf` gives a running process's start time, or
   * None when no process has the id). Pure, so tests give the process table.
   */
  def abandoned(owner: Owner, self: Owner, startOf: Long => Option[Option[Long]]): Boolean =
    owner.host == self.host && owner != self && (startOf(owner.pid) match {
      case None => true
      // Another process of the id, unless the owner could not tell its own start time (recorded as 0).
      case Some(Some(start)) => owner.startMs != 0L && start != owner.startMs
      case Some(None) => false // running, start time unknown: assume it is the owner
    })

  /** A running process's start time (None inside when the system does not say), or None when none has the id. */
  private def processStart(pid: Long): Option[Option[Long]] = {
    val handle = ProcessHandle.of(pid)
    if (handle.isPresent && handle.get.isAlive) Some(startMs(handle.get)) else None
  }

  private def startMs(process: ProcessHandle): Option[Long] = {
    val start = process.info().startInstant()
    if (start.isPresent) Some(start.get.toEpochMilli) else None
  }

  /**
   * Where working copies go: `localDir` if set, else Spark's local directories (the first of
   * SPARK_LOCAL_DIRS or spark.local.dir), else the JVM's temporary directory.
   */
  def root(localDir: Option[String]): File = {
    val configured = localDir
      .orElse(sys.env.get("SPARK_LOCAL_DIRS"))
      .orElse(Option(SparkEnv.get).flatMap(_.conf.getOption("spark.local.dir")))
      .map(_.split(",").head.trim)
      .getOrElse(System.getProperty("java.io.tmpdir"))
    new File(configured)
  }

  /**
   * A new, registered directory under `root` (not yet created); the first under a root removes the
   * abandoned directories there.
   */
  def create(root: File): File = {
    hook
    if (swept.add(root.getAbsoluteFile)) removeAbandoned(root)
    val dir = new File(root, name(self, UUID.randomUUID()))
    live.add(dir)
    dir
  }

  /** Deletes the directories under `root` whose owner no longer runs; returns them. */
  def removeAbandoned(root: File): Seq[File] = {
    val dirs = Option(root.listFiles()).map(_.toSeq).getOrElse(Nil).filter(_.getName.startsWith(Prefix))
    val gone = dirs.filter(d => ownerOf(d.getName).exists(abandoned(_, self, processStart)))
    gone.foreach(FileUtils.deleteQuietly)
    if (gone.nonEmpty) {
      logInfo(s"Removed ${gone.size} ttlstore working copies under $root whose processes no longer run " +
        s"(killed before they could delete them): ${gone.map(_.getName).mkString(", ")}")
    }
    gone
  }

  /** The working copy (`ttlstore-<owner>-<uuid>`) that holds `file`, if one does. */
  def workingCopyOf(file: File): Option[File] =
    Iterator.iterate(file.getAbsoluteFile)(_.getParentFile).takeWhile(_ != null).find(_.getName.startsWith(Prefix))

  /** Deletes `dir` and forgets it. */
  def release(dir: File): Unit = {
    FileUtils.deleteQuietly(dir)
    live.remove(dir)
  }
}
