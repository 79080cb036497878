package io.ttlstore

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.UUID
import java.util.concurrent.TimeUnit

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.{CheckpointFiles, VersionFile}
import io.ttlstore.config.TtlStoreConfig
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.store.lazyfs.LazyFileSystem

/**
 * Remote mode (`remote.localCacheMB`, issue 51: state larger than the local disk): a store keeps its SST files in the
 * checkpoint behind a bounded local cache, reads what is not local by ranged reads, and its snapshots reference the
 * checkpoint's copies of the files it keeps remote.
 */
class RemoteModeSuite extends AnyFunSuite {
  private val KeysPerVersion = 10000
  private val Versions = 9
  private val BudgetMb = 1L

  /** A provider whose checkpoint reads as an object store's does ([[HookedFileSystem]]). */
  private def provider(checkpoint: File, localDir: File, settings: (String, String)*): TtlStateStoreProvider =
    newProvider(TtlProvider, checkpoint, storeConf(settings :+ (TtlStoreConfig.LocalDir.key -> localDir.getPath): _*),
      location = Some(HookedFileSystem.location(checkpoint)), hadoop = HookedFileSystem.conf)
      .asInstanceOf[TtlStateStoreProvider]

  private def remote(checkpoint: File, localDir: File, budgetMb: Long = BudgetMb): TtlStateStoreProvider =
    provider(checkpoint, localDir, TtlStoreConfig.RemoteCacheMb.key -> budgetMb.toString)

  /** A user name that compresses poorly, so that the state outgrows the budget many times over. */
  private def user(version: Int, i: Int): String =
    s"$version-$i-" + UUID.nameUUIDFromBytes(s"$version/$i".getBytes) + UUID.nameUUIDFromBytes(s"$i/$version".getBytes)

  /** The SST files of the DB directories under `dir` (a file RocksDB deletes meanwhile is simply left out). */
  private def localSsts(dir: File): Seq[File] = Option(dir.listFiles()).toSeq.flatten.flatMap { f =>
    if (f.isDirectory) localSsts(f)
    else if (f.getName.endsWith(".sst") && dir.getName == "db") Seq(f)
    else Nil
  }

  private def localSstBytes(localDir: File): Long = localSsts(localDir).map(_.length()).sum

  /** The local SST bytes once `settledWhen` holds of them, or after 60 s. */
  private def localSstBytesOnce(localDir: File)(settledWhen: Long => Boolean): Long = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
    while (!settledWhen(localSstBytes(localDir)) && System.nanoTime() < deadline) Thread.sleep(50)
    localSstBytes(localDir)
  }

  private def checkpointSstBytes(checkpoint: File): Long =
    Option(new File(checkpoint, "0/0/ttlstore/sst").listFiles()).toSeq.flatten.map(_.length()).sum

  /** Versions 1 to `Versions`, each adding `KeysPerVersion` keys, maintenance after each; every row written. */
  private def written(p: TtlStateStoreProvider): Map[(String, Int), Long] = {
    (0 until Versions).foreach { v =>
      val store = p.getStore(v.toLong)
      (0 until KeysPerVersion).foreach(i => store.put(key(user(v, i)), value(v.toLong * KeysPerVersion + i)))
      store.commit()
      p.doMaintenance()
    }
    (for (v <- 0 until Versions; i <- 0 until KeysPerVersion) yield (user(v, i), 0) -> (v.toLong * KeysPerVersion + i))
      .toMap
  }

  /**
   * Commits small versions after `version`, maintenance after each, until the local SST files fit the budget (the
   * files a background compaction wrote after the last snapshot stay local until the next one uploads them); the
   * last version, or None if they never fit.
   */
  private def settled(p: TtlStateStoreProvider, localDir: File, version: Long): Option[Long] =
    (version until version + 30).find { v =>
      commitVersion(p, v, ("tick", 0) -> Some(v))
      p.doMaintenance()
      localSstBytes(localDir) <= (BudgetMb << 20)
    }.map(_ + 1)

  test("the local SST files return to the budget after the uploads while the state grows past it many times") {
    withTempDir { checkpoint =>
      withTempDir { local =>
        withProvider(remote(checkpoint, local)) { p =>
          val expected = written(p)
          assert(checkpointSstBytes(checkpoint) > 4 * (BudgetMb << 20), "the state outgrew the budget many times")
          val version = settled(p, local, Versions.toLong)
          assert(version.isDefined, s"${localSstBytes(local)} local SST bytes never came back within the budget")
          val ticked = expected + (("tick", 0) -> (version.get - 1))
          assert(read(p, version.get) == ticked, "every row reads back, most of them from the checkpoint")
          val more = p.getStore(version.get)
          more.put(key(user(0, 1)), value(-1L))
          assert(more.commit() == version.get + 1)
          assert(read(p, version.get + 1) == ticked + ((user(0, 1), 0) -> -1L))
        }
      }
    }
  }

  test("a snapshot taken with files kept remote loads anywhere: in remote mode and fetching every file") {
    withTempDir { checkpoint =>
      val expected = withTempDir(local => withProvider(remote(checkpoint, local))(written))
      withTempDir { local =>
        withProvider(remote(checkpoint, local)) { p =>
          assert(read(p, Versions.toLong) == expected)
          assert(localSstBytes(local) <= (BudgetMb << 20), "a remote-mode load brings down no more than its budget")
        }
      }
      withTempDir { local =>
        withProvider(provider(checkpoint, local))(p => assert(read(p, Versions.toLong) == expected))
      }
    }
  }

  test("a store reopened in remote mode brings its remote files down into the room its budget leaves") {
    withTempDir { checkpoint =>
      val expected = withTempDir(local => withProvider(remote(checkpoint, local))(written))
      val snapshot = withTempDir { local =>
        withProvider(provider(checkpoint, local)) { p => read(p, Versions.toLong); localSstBytes(local) }
      }
      // The checkpoint's SST files by their local names (000012-<unique>.sst is 000012.sst in the DB).
      val checkpointFiles = checkpointSstNames(checkpoint).map(_.takeWhile(_ != '-') + ".sst")
      assert(snapshot > (BudgetMb << 20))
      withTempDir { local =>
        withProvider(remote(checkpoint, local, budgetMb = 2 * snapshot / (1L << 20) + 1)) { p =>
          assert(read(p, Versions.toLong) == expected)
          // Every file the DB reads comes down. A compaction may run meanwhile, reading the snapshot's files from
          // the checkpoint and writing fewer bytes in their place (its output is local too, under a new number),
          // so the files brought down are the checkpoint's seen locally on the way.
          var cameDown = Set.empty[String]
          val live = () => p.localStore.db.liveSstBytes
          val held = localSstBytesOnce(local) { bytes =>
            cameDown ++= localSsts(local).map(_.getName).filter(checkpointFiles)
            bytes == live()
          }
          assert(held == live(), s"$held local SST bytes of the DB's ${live()}: not every file it reads came down")
          assert(cameDown.nonEmpty, s"none of the checkpoint's files came down: $checkpointFiles")
          assert(read(p, Versions.toLong) == expected, "every row reads back from the files brought down")
        }
      }
      val half = math.max(1L, snapshot / 2 / (1L << 20))
      withTempDir { local =>
        withProvider(remote(checkpoint, local, budgetMb = half)) { p =>
          assert(read(p, Versions.toLong) == expected)
          val held = localSstBytesOnce(local)(_ > 0)
          assert(held > 0 && held <= (half << 20), s"$held bytes came down into a budget of $half MiB")
          assert(read(p, Versions.toLong) == expected)
        }
      }
    }
  }

  private def checkpointSstNames(checkpoint: File): Set[String] =
    Option(new File(checkpoint, "0/0/ttlstore/sst").listFiles()).toSeq.flatten.map(_.getName).toSet

  /** A day's TTL with the native filter, whose compactions rewrite every file (RocksDB's bottommost level too). */
  private val Rewriting = Seq(TtlStoreConfig.Ttl.key -> "1d", TtlStoreConfig.NativeFilterEnabled.key -> "true")

  /**
   * The store, written in remote mode by `a` (in `localDir`) with most of its files read from the checkpoint, moves
   * to another executor, `b`, fetching every file, which compacts every file anew and commits 7 versions more with
   * their snapshots; b's cleanup then deletes the files b's lineage no longer uses, every one of a's. Returns a's
   * last version, and b's last version and its rows.
   */
  private def movedAway(checkpoint: File, localDir: File)(body: (TtlStateStoreProvider, Long, Long,
          Map[(String, Int), Long]) => Unit): Unit =
    withProvider(provider(checkpoint, localDir, Rewriting :+ (TtlStoreConfig.RemoteCacheMb.key -> "1"): _*)) { a =>
      val written = this.written(a)
      val left = settled(a, localDir, Versions.toLong).getOrElse(fail("a's local SST files never fit its budget"))
      val aFiles = checkpointSstNames(checkpoint)
      val last = withTempDir { localB =>
        withProvider(provider(checkpoint, localB, Rewriting: _*)) { b =>
          b.getStore(left).abort()
          // Compactions read without filling the block cache, which b shares with a here (on another executor
          // it would not): a's reads below find no block of a's files there.
          b.localStore.db.compactNow()
          val last = (0 until 7).foldLeft(left) { (v, _) =>
            val next = commitVersion(b, v, ("tick", 0) -> Some(v))
            b.doSnapshotMaintenance()
            next
          }
          b.doCleanupMaintenance()
          last
        }
      }
      assert(aFiles.intersect(checkpointSstNames(checkpoint)).isEmpty, "b's cleanup deleted every file of a's")
      body(a, left, last, written + (("tick", 0) -> (last - 1)))
    }

  test("a store that moved to another executor and back restores that executor's snapshot, never reading files gone") {
    withTempDir { checkpoint =>
      withTempDir { local =>
        movedAway(checkpoint, local) { (a, _, last, expected) =>
          assert(read(a, last) == expected, "a's DB, whose files b's cleanup deleted, is not built on")
        }
      }
    }
  }

  test(
    "a store left behind that reads a file another executor's cleanup deleted fails by name, never with wrong rows") {
    withTempDir { checkpoint =>
      withTempDir { local =>
        movedAway(checkpoint, local) { (a, left, _, _) =>
          val e = intercept[TtlStoreException](read(a, left))
          assert(e.errorName == "SST_MISSING" && e.getMessage.contains("/ttlstore/sst/"), e.getMessage)
        }
      }
    }
  }

  test("an upload of a snapshot whose remote file the checkpoint has no copy of fails, naming the file") {
    withTempDir { dir =>
      val files = new CheckpointFiles(new Path(new File(dir, "checkpoint").getAbsolutePath), new Configuration())
      val snapshot = new File(dir, "local-checkpoint")
      snapshot.mkdirs()
      Files.write(new File(snapshot, "000009.sst").toPath, LazyFileSystem.REMOTE_MARKER.getBytes(UTF_8))
      val e = intercept[IllegalStateException] {
        files.writeSnapshot(VersionFile(3L, None), 0L, None, snapshot, Map.empty)
      }
      assert(e.getMessage.contains("000009.sst") && e.getMessage.contains("holds no copy"), e.getMessage)
    }
  }
}
