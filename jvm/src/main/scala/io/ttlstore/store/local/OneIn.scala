package io.ttlstore.store.local

/**
 * One call in `n` says yes: how a use that is switched off still samples (the key index's reads, the read-ahead's
 * chunks), so that it learns when to switch on again. Pure; one thread.
 */
final class OneIn(n: Int) {
  private var skipped = 0

  def take(): Boolean = {
    skipped += 1
    if (skipped < n) false
    else {
      skipped = 0
      true
    }
  }
}
