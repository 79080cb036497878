package io.ttlstore

import java.io.File

import org.scalatest.concurrent.Eventually._
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.time.SpanSugar._

import io.ttlstore.StoreFixtures._
import io.ttlstore.store.local.KeyIndex

/** The filter of the keys a store holds, as a store uses it: what it answers must never hide a stored key. */
class KeyIndexSuite extends AnyFunSuite {

  private def ttlProvider(dir: File): TtlStateStoreProvider =
    newProvider(TtlProvider, dir).asInstanceOf[TtlStateStoreProvider]

  /** Commits versions 0 until `n`, each adding `perVersion` keys, maintenance (a snapshot upload) after each. */
  private def fill(p: TtlStateStoreProvider, n: Int, perVersion: Int): Unit =
    (0 until n).foreach { v =>
      commitVersion(p, v, (0 until perVersion).map(i => (s"v$v", i) -> Some(v.toLong)): _*)
      p.doMaintenance()
    }

  test("a store loaded from the empty state answers from its filter and finds every key it wrote") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        fill(p, 2, 500)
        val store = p.getStore(2)
        assert(p.localStore.keyIndex.serving)
        assert((0 until 500).forall(i => store.keyExists(key("v0", i)) && store.keyExists(key("v1", i))))
        assert(!store.keyExists(key("new", 1)))
        store.put(key("new", 1), value(1))
        assert(store.keyExists(key("new", 1)))
        store.commit()
        assert(store.metrics.numKeys == 1001)
      }
    }
  }

  test("a store restored from a snapshot reads through RocksDB until a scan after its first commit built the filter, " +
    "and the keys written while it scanned are found") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => fill(p, 4, 20000) }
      withProvider(ttlProvider(dir)) { p =>
        val first = p.getStore(4)
        assert(!p.localStore.keyIndex.serving) // restored from a snapshot: nothing known yet
        assert(first.keyExists(key("v3", 7)) && !first.keyExists(key("late", 0)))
        first.put(key("late", 0), value(1))
        first.commit() // the scan starts here
        val second = p.getStore(5)
        (1 until 2000).foreach(i => second.put(key("late", i), value(1))) // written while it may scan
        eventually(timeout(30.seconds)) { assert(second.keyExists(key("late", 0)) && p.localStore.keyIndex.serving) }
        assert((0 until 4).forall(v => (0 until 20000).forall(i => second.keyExists(key(s"v$v", i)))))
        assert((0 until 2000).forall(i => second.keyExists(key("late", i))))
        assert(!second.keyExists(key("never", 1)))
        second.commit()
        assert(second.metrics.numKeys == 82000)
      }
    }
  }

  test("reads that find their keys stop asking the filter, new keys bring it back, and every answer stays right") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        fill(p, 1, 20000)
        val store = p.getStore(1)
        val keys = p.localStore.keyIndex
        assert(keys.askedByEveryRead)
        assert((0 until 20000).forall(i => store.keyExists(key("v0", i))))
        assert(!keys.askedByEveryRead) // a window of "maybe" answers: most reads go to RocksDB alone
        assert((0 until 20000).forall(i => !store.keyExists(key("new", i))))
        assert(keys.askedByEveryRead) // the sampled reads found new keys
        (0 until 20000).foreach(i => store.put(key("new", i), value(1)))
        store.commit()
        assert(store.metrics.numKeys == 40000)
      }
    }
  }

  test("a filter whose keys are mostly gone is rebuilt smaller from a scan") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        fill(p, 1, 100000)
        val grown = p.localStore.keyIndex.bytes
        val store = p.getStore(1)
        (10 until 100000).foreach(i => store.remove(key("v0", i)))
        store.commit() // 10 rows left of the 100,000 keys the filter holds: a scan starts
        val next = p.getStore(2)
        eventually(timeout(30.seconds)) {
          assert(next.keyExists(key("v0", 3)) && p.localStore.keyIndex.bytes < grown / 2)
        }
        assert((0 until 10).forall(i => next.keyExists(key("v0", i))) && !next.keyExists(key("v0", 10)))
        next.abort()
      }
    }
  }

  test("where no scan may run (remote mode), a filter whose keys are mostly gone is dropped, not rebuilt") {
    val keys = new KeyIndex(scans = false)
    keys.startEmpty()
    (0 until 100000).foreach(i => keys.added(java.nio.ByteBuffer.allocate(8).putLong(i.toLong).array()))
    keys.committed(rows = 100000, db = null) // never read in remote mode
    assert(keys.serving)
    keys.committed(rows = 10, db = null)
    assert(!keys.serving && keys.bytes == 0L)
  }

  test("a store closed while its scan runs closes cleanly, and its next owner finds every key") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => fill(p, 3, 50000) }
      withProvider(ttlProvider(dir)) { p =>
        val store = p.getStore(3)
        store.put(key("late", 0), value(1))
        store.commit() // the scan starts; the provider closes at once
      }
      withProvider(ttlProvider(dir)) { p =>
        assert(read(p, 4).size == 150001)
      }
    }
  }
}
