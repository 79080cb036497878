package io.ttlstore.store.local

/**
 * Whether reading ahead pays for a store, from the time reads of its keys waited lately. A read ahead saves the
 * operator the wait of a read whose blocks were neither cached nor cheap to read: a request to the checkpoint's file
 * system (a lazily opened store, remote mode) or a slow disk. Where reads find their blocks cached, or read them from
 * the page cache in microseconds, it costs (rows copied, keys looked up twice) and saves nothing. So what counts is
 * the time of the reads that waited (each [[MinReadNanos]] or more), summed: a few reads of a file system's tens of
 * milliseconds among thousands of cached keys are worth reading ahead, since the operator would wait for each in
 * turn. Over each [[Window]] keys:
 *
 *  - while it reads ahead, it goes on if its reads ahead waited at least [[CostPerKeyNanos]] a key asked;
 *  - while it does not, one of the operator's own reads in [[SampleReads]] is timed, and it reads ahead again as soon
 *    as those samples say the operator waited that much (a restart, files demoted, reads that reached a remote file).
 *
 * Pure: it counts what it is told (durations measured by the caller), no clock, no I/O; the task's thread alone.
 */
final class ReadAheadUse {
  import ReadAheadUse._

  private var on = true
  private val sample = new OneIn(SampleReads)

  /** Keys in the current window: asked ahead while on, the operator's reads while off. */
  private var keys = 0L

  /** The time reads of the window's keys waited (while off, the sampled reads' times scaled to every read). */
  private var waited = 0L

  /** True if the next chunk of rows should be read ahead. */
  def readAhead(): Boolean = on

  /**
   * What reading ahead did since the last call: keys asked, and the summed time of the reads among them that waited
   * ([[waits]]). Ignored while off (reads ahead still finishing after it stopped).
   */
  def measured(asked: Long, waitedNanos: Long): Unit =
    if (on) {
      keys += asked
      waited += waitedNanos
      if (keys >= Window) {
        on = paidOver(keys)
        restart()
      }
    }

  /** While off: true if the operator's next read should be timed and told ([[operatorRead]]); counts the read. */
  def timeOperatorRead(): Boolean =
    !on && {
      keys += 1
      sample.take()
    }

  /** While off: a sampled read of the operator's took `nanos`. Reading ahead starts again once it would have paid. */
  def operatorRead(nanos: Long): Unit =
    if (!on) {
      if (waits(nanos)) waited += nanos * SampleReads
      if (paidOver(math.max(keys, Window))) { on = true; restart() }
      else if (keys >= Window) restart()
    }

  /** True while every chunk is read ahead (for tests and figures). */
  def readingEveryChunk: Boolean = on

  /** True if the window's waits, over `n` keys, came to at least what reading `n` keys ahead costs. */
  private def paidOver(n: Long): Boolean = waited > 0 && waited >= n * CostPerKeyNanos

  private def restart(): Unit = {
    keys = 0L
    waited = 0L
  }
}

object ReadAheadUse {

  /** Keys a decision is made from. */
  val Window = 1024L

  /**
   * A read that took this long waited on I/O: above a read from the block or page cache or a fast local disk (a
   * few to tens of microseconds), below a slow disk's (hundreds) and a file system request's (milliseconds).
   */
  val MinReadNanos = 100000L

  /** True if a read of `nanos` waited on I/O. */
  def waits(nanos: Long): Boolean = nanos >= MinReadNanos

  /**
   * Reading ahead goes on while reads waited this long per key: above what reading a key ahead costs the task (its
   * row copied, its key encoded and looked up a second time, a few microseconds), so that one request to a file
   * system in a window (30 ms against 10 ms) pays for reading the whole window ahead.
   */
  val CostPerKeyNanos = 10000L

  /**
   * While reading ahead is off, one of the operator's reads in this many is timed: where every read is cached, the
   * clock read twice every this many reads is what watching costs.
   */
  val SampleReads = 16
}
