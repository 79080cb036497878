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

  private def provider(checkpoint: File, localDir: File, settings: (String, String)*): TtlStateStoreProvider =
    newProvider(TtlProvider, checkpoint, storeConf(settings :+ (TtlStoreConfig.LocalDir.key -> localDir.getPath): _*))
      .asInstanceOf[TtlStateStoreProvider]

  private def remote(checkpoint: File, localDir: File, budgetMb: Long = BudgetMb): TtlStateStoreProvider =
    provider(checkpoint, localDir, TtlStoreConfig.RemoteCacheMb.key -> budgetMb.toString)

  /** A user name that compresses poorly, so that the state outgrows the budget many times over. */
  private def user(version: Int, i: Int): String =
    s"$version-$i-" + UUID.nameUUIDFromBytes(s"$version/$i".getBytes) + UUID.nameUUIDFromBytes(s"$i/$version".getBytes)

  private def localSstBytes(localDir: File): Long =
    Files.walk(localDir.toPath).toArray.map(_.asInstanceOf[java.nio.file.Path])
      .filter(p => p.getFileName.toString.endsWith(".sst") && p.getParent.getFileName.toString == "db")
      .map(p => Files.size(p)).sum

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
      assert(snapshot > (BudgetMb << 20))
      withTempDir { local =>
        withProvider(remote(checkpoint, local, budgetMb = 2 * snapshot / (1L << 20) + 1)) { p =>
          assert(read(p, Versions.toLong) == expected)
          // What RocksDB wrote since the open (a compaction) is local too.
          val held = localSstBytesOnce(local)(_ >= snapshot)
          assert(held >= snapshot, s"$held local SST bytes: the snapshot's $snapshot did not all come down")
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
