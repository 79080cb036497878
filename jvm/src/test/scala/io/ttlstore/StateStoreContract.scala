package io.ttlstore

import org.apache.spark.sql.execution.streaming.state._
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.errors.TtlStoreException

/**
 * What every state store provider must do, as Spark's operators rely on it. Run against Spark's
 * own HDFS provider (so the suite itself is checked) and against ttlstore's.
 */
abstract class StateStoreContract(
    providerClass: String,
    /** True for the provider's error when a version was never committed. */
    missingVersion: Throwable => Boolean) extends AnyFunSuite {

  private def provider(dir: java.io.File, conf: StateStoreConf = storeConf(),
      spec: KeyStateEncoderSpec = NoPrefixKeyStateEncoderSpec(keySchema)) =
    newProvider(providerClass, dir, conf, spec)

  test("a missing key reads as null and does not exist") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        val store = p.getStore(0)
        assert(store.get(key("nobody")) == null)
        assert(!store.keyExists(key("nobody")))
        store.abort()
      }
    }
  }

  test("a put is readable at once, and a remove hides it again") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        val store = p.getStore(0)
        store.put(key("ann"), value(1))
        assert(countOf(store.get(key("ann"))) == 1)
        assert(store.keyExists(key("ann")))
        store.put(key("ann"), value(2))
        assert(countOf(store.get(key("ann"))) == 2)
        store.remove(key("ann"))
        assert(store.get(key("ann")) == null)
        assert(store.commit() == 1)
      }
    }
  }

  test("the caller may reuse the rows it passed to put") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        val store = p.getStore(0)
        val k = key("ann")
        val v = value(1)
        store.put(k, v)
        v.setLong(0, 99)
        k.setInt(1, 7)
        assert(countOf(store.get(key("ann"))) == 1)
        assert(store.get(key("ann", 7)) == null)
        store.commit()
      }
    }
  }

  test("a key row whose buffer the caller rewrites in place is seen as the new key") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        val store = p.getStore(0)
        val reused = key("ann")
        assert(!store.keyExists(reused))
        store.put(reused, value(1))
        reused.setInt(1, 9) // same buffer, another key: ("ann", 9)
        assert(!store.keyExists(reused))
        store.put(reused, value(2))
        store.commit()
        assert(store.metrics.numKeys == 2)
        assert(read(p, 1) == Map(("ann", 0) -> 1L, ("ann", 9) -> 2L))
      }
    }
  }

  test("commit returns the next version and every committed version can be loaded again") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        assert(commitVersion(p, 0, ("a", 0) -> Some(1L), ("b", 0) -> Some(1L)) == 1)
        assert(commitVersion(p, 1, ("a", 0) -> Some(2L), ("b", 0) -> None) == 2)
        assert(commitVersion(p, 2, ("c", 0) -> Some(3L)) == 3)
        assert(read(p, 1) == Map(("a", 0) -> 1L, ("b", 0) -> 1L))
        assert(read(p, 2) == Map(("a", 0) -> 2L))
        assert(read(p, 3) == Map(("a", 0) -> 2L, ("c", 0) -> 3L))
        assert(read(p, 0) == Map.empty)
      }
    }
  }

  test("a version can be committed again after a retry, on top of the same base") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L))
        commitVersion(p, 1, ("a", 0) -> Some(2L))
        // The task of version 2 is retried: version 1 is loaded and committed again.
        commitVersion(p, 1, ("a", 0) -> Some(5L))
        assert(read(p, 2) == Map(("a", 0) -> 5L))
      }
    }
  }

  test("an aborted version leaves no trace") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L))
        val store = p.getStore(1)
        store.put(key("a"), value(100))
        store.put(key("b"), value(100))
        store.abort()
        assert(!store.hasCommitted)
        assert(read(p, 1) == Map(("a", 0) -> 1L))
        assert(commitVersion(p, 1, ("c", 0) -> Some(1L)) == 2)
        assert(read(p, 2) == Map(("a", 0) -> 1L, ("c", 0) -> 1L))
      }
    }
  }

  test("iteration tolerates removes and puts of the rows it walks") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        commitVersion(p, 0, (1 to 50).map(i => (s"k$i", 0) -> Some(i.toLong)): _*)
        val store = p.getStore(1)
        var seen = 0
        store.iterator().foreach { pair =>
          seen += 1
          val count = countOf(pair.value)
          if (count % 2 == 0) store.remove(pair.key) else store.put(pair.key, value(count * 10))
        }
        assert(seen == 50)
        store.commit()
        assert(read(p, 2) == (1 to 50).filter(_ % 2 == 1).map(i => (s"k$i", 0) -> i * 10L).toMap)
      }
    }
  }

  test("prefix scan returns exactly the keys that share the prefix") {
    withTempDir { dir =>
      withProvider(provider(dir, spec = PrefixKeyScanStateEncoderSpec(keySchema, 1))) { p =>
        val store = p.getStore(0)
        Seq("ann" -> 1, "ann" -> 2, "ann" -> 3, "bob" -> 1, "annie" -> 1).foreach {
          case (u, s) => store.put(key(u, s), value(s.toLong))
        }
        val anns = store.prefixScan(prefix("ann")).map(pair => keyOf(pair.key)).toSet
        assert(anns == Set("ann" -> 1, "ann" -> 2, "ann" -> 3))
        assert(store.prefixScan(prefix("carl")).isEmpty)
        store.remove(key("ann", 2))
        assert(store.prefixScan(prefix("ann")).map(pair => keyOf(pair.key)).toSet ==
          Set("ann" -> 1, "ann" -> 3))
        store.commit()
        assert(read(p, 1).keySet == Set("ann" -> 1, "ann" -> 3, "bob" -> 1, "annie" -> 1))
      }
    }
  }

  test("numKeys counts live rows across puts, overwrites and removes") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        val store = p.getStore(0)
        (1 to 10).foreach(i => store.put(key(s"k$i"), value(i)))
        store.put(key("k1"), value(100))
        store.remove(key("k2"))
        store.remove(key("never-there"))
        store.commit()
        assert(store.metrics.numKeys == 9)
      }
    }
  }

  test("a read store upgraded to a write store sees and changes the same version") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L))
        val readStore = p.getReadStore(1)
        assert(countOf(readStore.get(key("a"))) == 1)
        val writeStore = p.upgradeReadStoreToWriteStore(readStore, 1)
        writeStore.put(key("b"), value(2))
        assert(writeStore.commit() == 2)
        assert(read(p, 2) == Map(("a", 0) -> 1L, ("b", 0) -> 2L))
      }
    }
  }

  test("a new provider recovers every retained version from the checkpoint alone") {
    withTempDir { dir =>
      val expected = withProvider(provider(dir)) { p =>
        (0 until 8).map { v =>
          commitVersion(p, v, (s"k$v", 0) -> Some(v.toLong), (s"k${v - 2}", 0) -> None)
          if (v == 4) p.doMaintenance()
          (v + 1).toLong -> read(p, v + 1)
        }.toMap
      }
      withProvider(provider(dir)) { fresh =>
        expected.foreach { case (version, rows) => assert(read(fresh, version) == rows, s"v$version") }
      }
    }
  }

  test("maintenance keeps at least minBatchesToRetain versions loadable") {
    withTempDir { dir =>
      val conf = storeConf("spark.sql.streaming.minBatchesToRetain" -> "3")
      withProvider(provider(dir, conf)) { p =>
        (0 until 12).foreach { v =>
          commitVersion(p, v, (s"k$v", 0) -> Some(v.toLong))
          p.doMaintenance()
        }
      }
      withProvider(provider(dir, conf)) { fresh =>
        (10 to 12).foreach { v => assert(read(fresh, v.toLong).size == v, s"v$v") }
      }
    }
  }

  test("a version that was never committed cannot be loaded") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L))
      }
      withProvider(provider(dir)) { fresh =>
        val e = intercept[Exception](fresh.getStore(5))
        assert(missingVersion(e), s"not an error about a missing version: $e")
      }
    }
  }
}

class HdfsProviderContractSuite extends StateStoreContract(HdfsProvider,
    e => String.valueOf(e.getMessage).contains("CANNOT_LOAD_STATE_STORE"))

class TtlProviderContractSuite extends StateStoreContract(TtlProvider,
    {
      case e: TtlStoreException => e.errorName == "STATE_VERSION_NOT_FOUND" && e.getMessage.contains("5")
      case _ => false
    })
