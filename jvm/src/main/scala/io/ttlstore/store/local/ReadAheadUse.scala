package io.ttlstore.store.local

/**
 * Whether reading ahead pays for a store, from what it brought lately. A read ahead pays where a key's blocks
 * were neither cached nor cheap to read: the checkpoint's file system (a lazily opened store, remote mode) or a
 * slow disk, where the operator's own read would have waited. Where its reads find their blocks cached, or read
 * them from the page cache in microseconds, it costs (rows copied, keys encoded twice) and saves nothing. So:
 *
 *  - while the store's reads reach the checkpoint (its DB's reads of files not local, counted by the caller), it
 *    reads every chunk ahead: each such read is a request of milliseconds the operator would wait for in turn, and
 *    a few among thousands of cached keys are worth it. A store that had stopped starts again at the first chunk
 *    after one;
 *  - otherwise, over its last [[Window]] keys, it goes on while at least one in [[MinBroughtShareDenominator]]
 *    needed a read and those reads took at least [[MinReadNanos]] on average (a slow disk); else one chunk in
 *    [[SampleEvery]] is still read ahead, so that it reads ahead again once its reads slow down.
 *
 * Reads' times alone do not tell a request from a read that waited for a processor: where reading ahead keeps
 * every core busy, cached reads look slow too, so the checkpoint's reads are counted rather than timed.
 *
 * Pure: it counts what it is told (durations measured by the caller), no clock, no I/O; the task's thread alone.
 */
final class ReadAheadUse {
  import ReadAheadUse._

  private var on = true
  private val sample = new OneIn(SampleEvery)
  private var asked = 0L
  private var brought = 0L
  private var broughtNanos = 0L
  private var remote = 0L

  /** True if the next chunk of rows should be read ahead. */
  def readAhead(): Boolean =
    on || sample.take()

  /**
   * What reading ahead did since the last call: keys asked, those that needed a read, and those reads' time; and the
   * reads the checkpoint served the store's DB meanwhile (the operator's, the reads ahead, a compaction's).
   */
  def measured(keys: Long, needingRead: Long, readNanos: Long, checkpointReads: Long): Unit =
    if (checkpointReads > 0 && !on) {
      on = true
      restart()
    } else {
      asked += keys
      brought += needingRead
      broughtNanos += readNanos
      remote += checkpointReads
      if (asked >= Window) {
        on = remote > 0 ||
          (brought > 0 && brought * MinBroughtShareDenominator >= asked && broughtNanos >= brought * MinReadNanos)
        restart()
      }
    }

  private def restart(): Unit = {
    asked = 0L
    brought = 0L
    broughtNanos = 0L
    remote = 0L
  }

  /** True while every chunk is read ahead (for tests and figures). */
  def readingEveryChunk: Boolean = on
}

object ReadAheadUse {

  /** Keys asked a decision is made from. */
  val Window = 1024L

  /** Reading ahead goes on while at least one key in this many needed a read. */
  val MinBroughtShareDenominator = 64L

  /**
   * ... and those reads took this long on average: above a read from the page cache or a fast local disk (a few
   * to tens of microseconds), below a slow disk's (hundreds) and a file system request's (milliseconds).
   */
  val MinReadNanos = 100000L

  /**
   * While reading ahead is off, one chunk in this many is still read ahead: a sampled chunk's rows are copied and
   * its keys looked up twice, so where every read is cached the sample is what reading ahead costs.
   */
  val SampleEvery = 64
}
