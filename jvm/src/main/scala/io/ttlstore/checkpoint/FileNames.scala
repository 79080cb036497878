package io.ttlstore.checkpoint

import io.ttlstore.compat.Parse

/**
 * Names read from checkpoint files (a snapshot's entries and manifest, Spark's zip metadata) that
 * become local or checkpoint paths. A damaged or crafted file must not name a path outside the
 * directory it is restored into. Pure.
 */
object FileNames {

  /**
   * True if `name` is one plain file name: not empty, not "." or "..", no separator, and no ':'
   * (which a Hadoop path would read as a scheme).
   */
  def isPlain(name: String): Boolean =
    name != null && name.nonEmpty && name != "." && name != ".." &&
      !name.exists(c => c == '/' || c == '\\' || c == ':' || c == '\u0000')

  /**
   * The name of a version's files without their suffix: `<v>` in checkpoint format v1, `<v>_<id>` in
   * format v2, where `id` is the version's checkpoint id.
   */
  def stem(version: Long, id: Option[String]): String = id.fold(version.toString)(i => s"${version}_$i")

  /** The version and checkpoint id a stem names ([[stem]]); None for any other name. */
  def parseStem(stem: String): Option[(Long, Option[String])] =
    stem.indexOf('_') match {
      case -1 => Parse.long(stem).filter(_ >= 0).map(_ -> None)
      case i =>
        val id = stem.substring(i + 1)
        if (!isCheckpointId(id)) None else Parse.long(stem.substring(0, i)).filter(_ >= 0).map(_ -> Some(id))
    }

  /** True for what Spark and ttlstore use as checkpoint ids (UUIDs): letters, digits and dashes. */
  def isCheckpointId(id: String): Boolean =
    id != null && id.nonEmpty && id.length <= 64 && id.forall(c => c.isLetterOrDigit && c < 128 || c == '-')
}
