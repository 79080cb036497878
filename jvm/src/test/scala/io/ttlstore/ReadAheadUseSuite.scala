package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.store.local.ReadAheadUse

/** When a store reads ahead: while its reads reach the checkpoint or wait on a slow disk, else one chunk in SampleEvery. */
class ReadAheadUseSuite extends AnyFunSuite {
  import ReadAheadUse._

  /**
   * Asks for `chunks` chunks of `keys` keys; each chunk read ahead reports `read` of them read in `nanos` each, and
   * every chunk `remote` reads the checkpoint served.
   */
  private def run(use: ReadAheadUse, chunks: Int, keys: Long, read: Long, nanos: Long, remote: Long = 0L): Int =
    (0 until chunks).count { _ =>
      val ahead = use.readAhead()
      if (ahead) use.measured(keys, read, read * nanos, remote)
      else use.measured(0L, 0L, 0L, remote)
      ahead
    }

  test("every chunk is read ahead while its keys wait for a file system's requests") {
    val use = new ReadAheadUse
    assert(run(use, 100, 500, read = 400, nanos = 20000000L, remote = 400) == 100)
    assert(use.readingEveryChunk)
  }

  test("a store whose keys are all cached reads one chunk in SampleEvery ahead after one window") {
    val use = new ReadAheadUse
    val chunks = (Window / 100).toInt + 1
    assert(run(use, chunks, 100, read = 0, nanos = 0) == chunks)
    assert(!use.readingEveryChunk)
    assert(run(use, 10 * SampleEvery, 100, read = 0, nanos = 0) == 10)
  }

  /** A store that stopped reading ahead: its first keys were all cached. */
  private def stopped(): ReadAheadUse = {
    val use = new ReadAheadUse
    run(use, 20, 100, read = 0, nanos = 0)
    assert(!use.readingEveryChunk)
    use
  }

  test("reads from the page cache, fast as they are, turn reading ahead off") {
    val use = new ReadAheadUse
    run(use, 20, 100, read = 100, nanos = 20000L)
    assert(!use.readingEveryChunk)
  }

  test("a store whose local reads slow down again (a slow disk) reads every chunk ahead once sampled enough") {
    val use = stopped()
    val sampled = run(use, 11 * SampleEvery, 100, read = 90, nanos = 30000000L)
    assert(use.readingEveryChunk, s"$sampled chunks sampled")
  }

  test(
    "a few slow reads that reach no checkpoint (a local disk, or cached ones on busy processors) do not keep it on") {
    val use = new ReadAheadUse
    run(use, 20, 1000, read = 1000 / MinBroughtShareDenominator / 2, nanos = 30000000L)
    assert(!use.readingEveryChunk)
  }

  test("a few reads of the checkpoint among many cached keys keep it on: the operator would wait for each") {
    val use = new ReadAheadUse
    assert(run(use, 20, 1000, read = 2, nanos = 30000000L, remote = 2) == 20)
    assert(use.readingEveryChunk)
  }

  test("a store off reads every chunk ahead again at the first chunk after its reads reach the checkpoint") {
    val use = stopped()
    use.measured(0L, 0L, 0L, checkpointReads = 1L)
    assert(use.readingEveryChunk)
  }
}
