package io.ttlstore.store.local

/**
 * Whether a read should ask the key index ([[KeyIndex]]) before RocksDB, from what the index
 * answered lately. The index pays only for the reads it answers "absent": a read of a stored key passes
 * it (a cache miss per part it probes) and then asks RocksDB all the same: in a steady deduplication or
 * an aggregation's updates, where nearly every key read is stored, the index is pure cost
 * (docs/performance.md, "The key index", has the measurements). So the index is asked
 * while at least one in [[MinAbsentShareDenominator]] of its last [[Window]] answers was "absent"; below that only one
 * read in [[SampleEvery]] asks it, so that the share is still known and the index serves again once new
 * keys come.
 *
 * Skipping the index never changes an answer: RocksDB holds the truth and the index only saves asking
 * it. Pure: it counts answers, no clock, no I/O; not thread-safe (the task's thread alone).
 */
final class KeyIndexUse {
  import KeyIndexUse._

  private var asking = true
  private val sample = new OneIn(SampleEvery)
  private var answers = 0
  private var absent = 0

  /** True if this read should ask the index (then [[answered]] takes what it said). */
  def ask(): Boolean =
    asking || sample.take()

  /** Counts what the index answered for a read that asked it; returns `wasAbsent`. */
  def answered(wasAbsent: Boolean): Boolean = {
    answers += 1
    if (wasAbsent) absent += 1
    if (answers == Window) {
      asking = absent * MinAbsentShareDenominator >= Window
      answers = 0
      absent = 0
    }
    wasAbsent
  }

  /** True while every read asks the index (for tests and figures). */
  def askingEveryRead: Boolean = asking
}

object KeyIndexUse {

  /** Answers a decision is made from. */
  val Window = 1024

  /**
   * The index is asked by every read while at least one answer in this many was "absent" (1/8). An
   * "absent" answer saves a RocksDB read of a missing key, a stored key's read pays the index's probes
   * for nothing; by the figures in docs/performance.md it breaks even near one read in five. Below one in
   * eight it surely costs more than it saves; between the two, a stream of new keys keeps it.
   */
  val MinAbsentShareDenominator = 8

  /** While the index is not asked by every read, one read in this many asks it. */
  val SampleEvery = 16
}
