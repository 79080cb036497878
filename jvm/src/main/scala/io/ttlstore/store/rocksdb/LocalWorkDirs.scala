package io.ttlstore.store.rocksdb

import java.io.File
import java.net.InetAddress
import java.nio.channels.{FileChannel, OverlappingFileLockException}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, NoSuchFileException, StandardOpenOption}
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
 * `ttlstore-<host>-<pid>-<startMs>-<uuid>`), and the owner holds a claim on the root while it runs: a
 * file named for it (`.ttlstore-<host>-<pid>-<startMs>.claim`) that it keeps locked. The kernel drops
 * the lock when the process ends, however it ends. The first directory a JVM makes under a root removes
 * the directories there whose owner no longer runs: same host, and its claim is free (or, without a
 * claim, no process has the owner's id). No clock is read to judge: a start time comes from the wall
 * clock at boot, and two live JVMs read it differently once the clock was stepped (a resumed VM), which
 * once made one delete another's open store. Directories of other hosts (a local root shared between
 * containers), of processes that still run, and of another form are left alone.
 */
object LocalWorkDirs extends Logging {

  /** Who made a working directory: a host (hashed), a process id and that process's start time. */
  final case class Owner(host: String, pid: Long, startMs: Long)

  /** Whether an owner still runs, as its claim on a root says. */
  sealed trait Claim
  object Claim {

    /** Its claim file is locked: the owner runs (or the file is not ours to lock). */
    case object Held extends Claim

    /** Its claim file could be locked: the owner ended. */
    case object Free extends Claim

    /** No claim file: made before claims, or the owner could not write one. */
    case object Missing extends Claim
  }

  private val live = ConcurrentHashMap.newKeySet[File]()
  private val swept = ConcurrentHashMap.newKeySet[File]()
  private val claims = new ConcurrentHashMap[File, FileChannel]()
  private lazy val hook: Unit = {
    sys.addShutdownHook {
      live.forEach(d => FileUtils.deleteQuietly(d))
      claims.forEach { (file, channel) => FileUtils.deleteQuietly(file); Try(channel.close()) }
    }
    ()
  }

  private val Prefix = "ttlstore-"
  private val OwnerPart = """([0-9a-f]{8})-(\d+)-(\d+)"""
  private val Named = s"""$Prefix$OwnerPart-[0-9a-f-]{36}""".r
  private val ClaimSuffix = ".claim"
  private val ClaimNamed = s"""\\.$Prefix$OwnerPart\\$ClaimSuffix""".r

  /** How a name records its owner: `<host>-<pid>-<startMs>`. */
  private def ownerPart(owner: Owner): String = s"${owner.host}-${owner.pid}-${owner.startMs}"

  private def owner(host: String, pid: String, start: String): Option[Owner] =
    Try(Owner(host, pid.toLong, start.toLong)).toOption

  /** This JVM as the owner of its directories. */
  lazy val self: Owner = {
    val process = ProcessHandle.current()
    Owner(hostHash(Try(InetAddress.getLocalHost.getHostName).getOrElse("localhost")), process.pid(),
      startMs(process).getOrElse(0L))
  }

  def hostHash(hostName: String): String =
    f"${MurmurHash3.bytesHash(hostName.getBytes(StandardCharsets.UTF_8))}%08x"

  /** A directory name of `owner`'s. */
  def name(owner: Owner, id: UUID): String = s"$Prefix${ownerPart(owner)}-$id"

  /** The owner a directory name records; None for any other name (ttlstore before owners, other files). */
  def ownerOf(dirName: String): Option[Owner] = dirName match {
    case Named(host, pid, start) => owner(host, pid, start)
    case _ => None
  }

  /** The file by which `owner` claims `root` while it runs. */
  def claimFile(root: File, owner: Owner): File =
    new File(root, s".$Prefix${ownerPart(owner)}$ClaimSuffix")

  /**
   * Whether a directory of `owner`'s is abandoned, as seen from `self`: on this host, not `self`'s, and its
   * owner's `claim` is free; without a claim, when no process has the owner's id (`running`). Pure, so tests
   * give the claims and the process table.
   */
  def abandoned(owner: Owner, self: Owner, claim: Claim, running: Long => Boolean): Boolean =
    owner.host == self.host && owner != self && (claim match {
      case Claim.Free => true
      case Claim.Held => false
      case Claim.Missing => !running(owner.pid)
    })

  private def running(pid: Long): Boolean = {
    val handle = ProcessHandle.of(pid)
    handle.isPresent && handle.get.isAlive
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
   * A new, registered directory under `root` (not yet created); the first under a root claims it for this JVM and
   * removes the abandoned directories there.
   */
  def create(root: File): File = {
    hook
    if (swept.add(root.getAbsoluteFile)) {
      claim(root)
      removeAbandoned(root)
    }
    val dir = new File(root, name(self, UUID.randomUUID()))
    live.add(dir)
    dir
  }

  /**
   * Writes and locks this JVM's claim on `root` for as long as it runs. Without one (a root it cannot write to
   * yet), other JVMs judge its directories by its process id alone, which is still safe.
   */
  private def claim(root: File): Unit = {
    val file = claimFile(root, self)
    Try {
      Files.createDirectories(root.toPath)
      val channel = FileChannel.open(file.toPath, StandardOpenOption.CREATE, StandardOpenOption.WRITE)
      try {
        channel.lock()
        claims.put(file, channel)
      } catch { case e: Throwable => channel.close(); throw e }
    }.failed.foreach { e =>
      logWarning(s"Could not claim $file for this process (${e.getMessage}); other processes will judge its " +
        "working copies by its process id alone")
    }
  }

  /**
   * Runs `judge` with `owner`'s claim on `root`. A free claim stays locked while `judge` runs and is deleted
   * after it, so two processes never both judge the same owner gone, and what a dead owner left goes at once.
   */
  private def withClaim(root: File, owner: Owner)(judge: Claim => Seq[File]): Seq[File] = {
    val file = claimFile(root, owner)
    val opened =
      try Right(FileChannel.open(file.toPath, StandardOpenOption.WRITE))
      catch {
        case _: NoSuchFileException => Left(Claim.Missing)
        case _: Exception => Left(Claim.Held) // another user's: not ours to judge
      }
    opened match {
      case Left(claim) => judge(claim)
      case Right(channel) =>
        try {
          val lock =
            try channel.tryLock()
            catch { case _: OverlappingFileLockException => null } // this JVM's own
          if (lock == null) judge(Claim.Held)
          else {
            try {
              val removed = judge(Claim.Free)
              Files.deleteIfExists(file.toPath)
              removed
            } finally lock.release()
          }
        } finally channel.close()
    }
  }

  /** Deletes the directories under `root` whose owner no longer runs, and the claims those owners left; returns
   * the directories. */
  def removeAbandoned(root: File): Seq[File] = {
    val entries = Option(root.listFiles()).map(_.toSeq).getOrElse(Nil)
    val dirs = entries.filter(_.getName.startsWith(Prefix)).flatMap(d => ownerOf(d.getName).map(_ -> d))
    val claimed = entries.flatMap(f => claimOwner(f.getName))
    val owners = (dirs.map(_._1) ++ claimed).distinct.filter(o => o.host == self.host && o != self)
    val gone = owners.flatMap { owner =>
      withClaim(root, owner) { claim =>
        if (abandoned(owner, self, claim, running)) {
          val theirs = dirs.collect { case (`owner`, d) => d }
          theirs.foreach(FileUtils.deleteQuietly)
          theirs
        } else Nil
      }
    }
    if (gone.nonEmpty) {
      logInfo(s"Removed ${gone.size} ttlstore working copies under $root whose processes no longer run " +
        s"(killed before they could delete them): ${gone.map(_.getName).mkString(", ")}")
    }
    gone
  }

  /** The owner a claim file's name records; None for any other name. */
  def claimOwner(fileName: String): Option[Owner] = fileName match {
    case ClaimNamed(host, pid, start) => owner(host, pid, start)
    case _ => None
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
