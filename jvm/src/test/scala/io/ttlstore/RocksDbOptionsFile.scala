package io.ttlstore

import java.io.File

/** The OPTIONS file RocksDB wrote last in a database directory, read the way tests check options. */
object RocksDbOptionsFile {

  /** The keys and values of one section, `header` as RocksDB writes it (`CFOptions "timestamped"`). */
  def section(dbDir: File, header: String): Map[String, String] = {
    val options = dbDir.listFiles().filter(_.getName.startsWith("OPTIONS-")).maxBy(_.getName)
    val source = scala.io.Source.fromFile(options, "UTF-8")
    val lines =
      try source.getLines().map(_.trim).toList
      finally source.close()
    lines.dropWhile(_ != s"[$header]").drop(1).takeWhile(!_.startsWith("[")).filter(_.contains("=")).map { l =>
      val Array(k, v) = l.split("=", 2); k -> v
    }.toMap
  }

  /** The options of the column family `name`. */
  def family(dbDir: File, name: String): Map[String, String] = section(dbDir, s"""CFOptions "$name"""")
}
