package io.ttlstore.checkpoint

/** One committed version under checkpoint format v2: its number and the checkpoint id Spark knows it by. */
final case class LineageItem(version: Long, id: String) {
  override def toString: String = s"${version}_$id"
}

/**
 * How checkpoint format v2 (`spark.sql.streaming.stateStore.checkpointFormatVersion=2`) rebuilds a
 * version. Every committed version of a store has a unique checkpoint id, and two attempts of one
 * batch commit the same version under different ids; Spark's commit log says which one counts.
 * Each changelog records its lineage: the (version, id) of every version from the base it was
 * written on (a snapshot, or the empty state) to the one before it. Loading (v, id) follows that
 * lineage back to the newest snapshot in it, so a load never replays a discarded attempt's files.
 * Pure: it sees lineages and which snapshots exist, and decides.
 */
object Lineage {

  /**
   * The full lineage of `target`: what its changelog recorded, then itself. Left: why it is not a
   * chain of consecutive versions ending just before `target`.
   */
  def of(recorded: Seq[LineageItem], target: LineageItem): Either[String, Vector[LineageItem]] = {
    val full = (recorded :+ target).toVector
    val gap = full.sliding(2).collectFirst {
      case Seq(a, b) if b.version != a.version + 1 => s"${a.version} is followed by ${b.version}"
    }
    gap match {
      case Some(why) => Left(s"its recorded lineage (${full.mkString(", ")}) is not consecutive: $why")
      case None => Right(full)
    }
  }

  /**
   * Where loading the last item of `lineage` starts: the newest item that has a snapshot, or the
   * empty state (None) when the lineage reaches back to version 1. Left: the lineage starts at a
   * snapshot that no longer exists.
   */
  def base(lineage: Vector[LineageItem], hasSnapshot: LineageItem => Boolean): Either[String, Option[LineageItem]] =
    lineage.reverseIterator.find(hasSnapshot) match {
      case found @ Some(_) => Right(found)
      case None if lineage.headOption.forall(_.version == 1L) => Right(None)
      case None =>
        Left(s"no snapshot of its lineage (${lineage.mkString(", ")}) exists, and it does not reach back to version 1")
    }

  /**
   * [[of]], then [[base]]: where loading `target` starts (None: the empty state) and the lineage from
   * there to `target`.
   */
  def fromBase(recorded: Seq[LineageItem], target: LineageItem, hasSnapshot: LineageItem => Boolean)
      : Either[String, (Option[LineageItem], Vector[LineageItem])] =
    of(recorded, target).flatMap { lineage =>
      base(lineage, hasSnapshot).map(b => b -> lineage.filter(_.version >= b.fold(0L)(_.version)))
    }

  /** The lineage to record from now on once `snapshot` exists: from that snapshot on, if it is in it. */
  def from(lineage: Vector[LineageItem], snapshot: LineageItem): Vector[LineageItem] =
    if (lineage.contains(snapshot)) lineage.dropWhile(_ != snapshot) else lineage

  /**
   * The versions from `startVersion` to `end`, oldest first, as `end`'s lineage says: each changelog
   * records the lineage back to its own base only, so the walk reads the lineage of the oldest version
   * found so far until it reaches `startVersion`. Left: why the lineages do not lead there.
   */
  def walkBack(startVersion: Long, end: LineageItem, lineageOf: LineageItem => Seq[LineageItem])
      : Either[String, Vector[LineageItem]] = {
    var chain = List(end)
    var stuck: Option[String] = None
    while (stuck.isEmpty && chain.head.version > startVersion) {
      val earlier = lineageOf(chain.head).filter(i => i.version >= startVersion && i.version < chain.head.version)
      if (earlier.isEmpty)
        stuck = Some(s"the changelog of ${chain.head} records no version between $startVersion and it")
      else chain = earlier.toList ++ chain
    }
    stuck.toLeft(chain.toVector).flatMap { walked =>
      if (walked.head.version != startVersion) Left(s"its lineage does not pass version $startVersion")
      else of(walked.init, walked.last)
    }
  }
}
