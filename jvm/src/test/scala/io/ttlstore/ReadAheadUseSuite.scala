package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.store.local.ReadAheadUse

/** When a store reads ahead: while its reads wait on I/O long enough to pay for it, judged by their summed time. */
class ReadAheadUseSuite extends AnyFunSuite {
  import ReadAheadUse._

  private val Request = 30000000L // a request to an object store, 30 ms
  private val PageCache = 20000L // a read from the page cache, 20 us

  /**
   * Runs `chunks` chunks of `keys` keys, each key read once by the operator; a chunk read ahead reports `slow` of its
   * keys read in `nanos` each. While off, the operator's sampled reads are slow in the same share. Returns the chunks
   * read ahead.
   */
  private def run(use: ReadAheadUse, chunks: Int, keys: Int, slow: Int, nanos: Long): Int =
    (0 until chunks).count { _ =>
      val ahead = use.readAhead()
      if (ahead) use.measured(keys, if (ReadAheadUse.waits(nanos)) slow * nanos else 0L)
      else (0 until keys).foreach(k => if (use.timeOperatorRead()) use.operatorRead(if (k < slow) nanos else 0L))
      ahead
    }

  test("every chunk is read ahead while its keys wait for a file system's requests") {
    val use = new ReadAheadUse
    assert(run(use, 100, 500, slow = 400, nanos = Request) == 100)
    assert(use.readingEveryChunk)
  }

  test("a store whose keys are all cached stops reading ahead after one window and stays off") {
    val use = new ReadAheadUse
    val chunks = (Window / 100).toInt + 1
    assert(run(use, chunks, 100, slow = 0, nanos = 0) == chunks)
    assert(!use.readingEveryChunk)
    assert(run(use, 100, 100, slow = 0, nanos = 0) == 0)
  }

  test("reads from the page cache, fast as they are, turn reading ahead off") {
    val use = new ReadAheadUse
    run(use, 20, 100, slow = 100, nanos = PageCache)
    assert(!use.readingEveryChunk)
  }

  test("a few requests to a file system among many cached keys keep it on: the operator would wait for each") {
    val use = new ReadAheadUse
    assert(run(use, 20, 1000, slow = 2, nanos = Request) == 20)
    assert(use.readingEveryChunk)
  }

  test("a store off reads ahead again once the operator's sampled reads wait (a restart, files demoted)") {
    val use = new ReadAheadUse
    run(use, 20, 100, slow = 0, nanos = 0)
    assert(!use.readingEveryChunk)
    run(use, 1, 100, slow = 2 * SampleReads, nanos = Request)
    assert(use.readingEveryChunk)
  }

  test("a slow disk's reads keep it on only where enough keys wait to pay for reading them all ahead") {
    val disk = 300000L // 300 us a read
    val few = new ReadAheadUse
    run(few, 20, 1000, slow = 10, nanos = disk)
    assert(!few.readingEveryChunk, "10 reads of 300 us in 1,000 keys: 3 ms saved against 10 ms of cost")
    val many = new ReadAheadUse
    run(many, 20, 1000, slow = 100, nanos = disk)
    assert(many.readingEveryChunk, "100 reads of 300 us in 1,000 keys: 30 ms saved")
  }

  test("while off, one of the operator's reads in SampleReads is timed") {
    val use = new ReadAheadUse
    run(use, 20, 100, slow = 0, nanos = 0)
    assert((0 until 10 * SampleReads).count(_ => use.timeOperatorRead()) == 10)
  }

  test("while on, the operator's reads are not sampled: the reads ahead are what is measured") {
    val use = new ReadAheadUse
    assert((0 until 10 * SampleReads).count(_ => use.timeOperatorRead()) == 0)
  }
}
