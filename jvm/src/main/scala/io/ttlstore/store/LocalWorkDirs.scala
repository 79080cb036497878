package io.ttlstore.store

import java.io.File
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import org.apache.commons.io.FileUtils
import org.apache.spark.SparkEnv

/**
 * The local working directories of this JVM's stores. A store deletes its own on `close`, but Spark
 * does not close every provider when an executor or driver exits, and the directories live under
 * the shared local root (not under Spark's per-application temporary directory, which Spark deletes
 * itself): a shutdown hook deletes whatever is still registered, so working copies never pile up.
 */
object LocalWorkDirs {
  private val live = ConcurrentHashMap.newKeySet[File]()
  private lazy val hook: Unit = {
    sys.addShutdownHook { live.forEach(d => FileUtils.deleteQuietly(d)) }
    ()
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

  /** A new, registered directory `ttlstore-<uuid>` under `root` (not yet created). */
  def create(root: File): File = {
    hook
    val dir = new File(root, s"ttlstore-${UUID.randomUUID()}")
    live.add(dir)
    dir
  }

  /** Deletes `dir` and forgets it. */
  def release(dir: File): Unit = {
    FileUtils.deleteQuietly(dir)
    live.remove(dir)
  }
}
