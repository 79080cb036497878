package io.ttlstore.store.rocksdb

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import scala.util.Try

/**
 * This JVM's resident memory (RSS), which a container limit holds against the executor's heap plus its overhead:
 * `VmRSS` of /proc/self/status, read at most once per [[RefreshNanos]] however many stores report it; 0 where there
 * is no /proc (not Linux).
 */
object ResidentMemory {

  private val RefreshNanos = 1000L * 1000 * 1000
  private val Status = Paths.get("/proc/self/status")

  @volatile private var sample: (Long, Long) = (Long.MinValue, 0L)

  def bytes: Long = {
    val (at, value) = sample
    val now = System.nanoTime()
    if (at != Long.MinValue && now - at < RefreshNanos) value
    else {
      val read = Try(parse(new String(Files.readAllBytes(Status), StandardCharsets.US_ASCII))).toOption.flatten
        .getOrElse(0L)
      sample = (now, read)
      read
    }
  }

  /** The bytes of the `VmRSS:` line of a /proc/PID/status text (its figure is in kB). */
  def parse(status: String): Option[Long] =
    status.split('\n').find(_.startsWith("VmRSS:"))
      .flatMap(l => Try(l.stripPrefix("VmRSS:").trim.split("\\s+")(0).toLong * 1024).toOption)
}
