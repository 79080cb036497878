package io.ttlstore

import java.io.File

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.ProviderFixtures._
import io.ttlstore.StoreFixtures._

/**
 * Which SST files a load fetches: none a previous copy already holds, and every one where nothing is local,
 * counted in the load's figures.
 */
class SnapshotFetchSuite extends AnyFunSuite {

  test("a store going back to an older version takes the SST files it already holds, and fetches none of them") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        // minDeltasForSnapshot 3: snapshots of versions 3 and 6, each uploaded by the maintenance after it.
        (0 until 6).foreach { v =>
          commitVersion(p, v, (0 until 500).map(i => (s"k$v-$i", 0) -> Some(i.toLong)): _*)
          if (v == 2 || v == 5) p.doMaintenance()
        }
        val older = p.getStore(4)
        val byName = older.metrics.customMetrics.map { case (k, v) => k.name -> v }
        older.abort()
        assert(byName("ttlstoreLoadFilesReused") >= 1, "the local DB of version 6 holds version 3's files")
        assert(byName("ttlstoreLoadFilesFetched") == 0 && byName("ttlstoreLoadBytesFetched") == 0)
        assert(read(p, 4).size == 4 * 500)
      }
    }
  }

  test("a store opened where nothing is local fetches every SST file of its snapshot, and counts them") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        (0 until 3).foreach(v => commitVersion(p, v, (0 until 500).map(i => (s"k$v-$i", 0) -> Some(i.toLong)): _*))
        p.doMaintenance()
      }
      withProvider(ttlProvider(dir)) { fresh =>
        val store = fresh.getStore(3)
        val byName = store.metrics.customMetrics.map { case (k, v) => k.name -> v }
        store.abort()
        val ssts = new File(ttlDir(dir), "sst").listFiles()
        assert(byName("ttlstoreLoadFilesFetched") == ssts.length)
        assert(byName("ttlstoreLoadBytesFetched") == ssts.map(_.length()).sum)
        assert(byName("ttlstoreLoadFilesReused") == 0)
      }
    }
  }
}
