package io.ttlstore.checkpoint

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
}
