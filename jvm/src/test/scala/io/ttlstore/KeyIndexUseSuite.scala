package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.store.local.KeyIndexUse

/** When a read asks the key index: every read while the filter answers "absent" often enough, else a sample. */
class KeyIndexUseSuite extends AnyFunSuite {

  /** Runs `reads` reads whose filter answer is `absent(i)` for the i-th read that asks; returns how many asked. */
  private def run(use: KeyIndexUse, reads: Int, absent: Int => Boolean): Int = {
    var asked = 0
    (0 until reads).foreach { _ =>
      if (use.ask()) {
        use.answered(absent(asked))
        asked += 1
      }
    }
    asked
  }

  test("every read asks the filter at first and while it answers absent for new keys") {
    val use = new KeyIndexUse
    assert(run(use, 10 * KeyIndexUse.Window, _ => true) == 10 * KeyIndexUse.Window)
    assert(use.askingEveryRead)
  }

  test("reads of stored keys stop asking after one window, then one read in SampleEvery asks") {
    val use = new KeyIndexUse
    assert(run(use, KeyIndexUse.Window, _ => false) == KeyIndexUse.Window)
    assert(!use.askingEveryRead)
    assert(run(use, 100 * KeyIndexUse.SampleEvery, _ => false) == 100)
  }

  test("new keys bring every read back once a window of sampled answers holds enough of them") {
    val use = new KeyIndexUse
    run(use, KeyIndexUse.Window, _ => false)
    val reads = KeyIndexUse.Window * KeyIndexUse.SampleEvery
    assert(run(use, reads, _ => true) == KeyIndexUse.Window)
    assert(use.askingEveryRead)
  }

  test("the filter keeps every read at one absent answer in MinAbsentShareDenominator, and not below") {
    val d = KeyIndexUse.MinAbsentShareDenominator
    val atShare = new KeyIndexUse
    run(atShare, KeyIndexUse.Window, i => i % d == 0)
    assert(atShare.askingEveryRead)
    val below = new KeyIndexUse
    run(below, KeyIndexUse.Window, i => i % (d * 2) == 0)
    assert(!below.askingEveryRead)
  }

  test("what a read asked is handed back unchanged") {
    val use = new KeyIndexUse
    assert(use.answered(true) && !use.answered(false))
  }
}
