package io.ttlstore.store.local

import java.io.File

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.{CheckpointFiles, SstFile, VersionFile}
import io.ttlstore.config.{TtlStoreConfig, TtlStoreSettings}
import io.ttlstore.store.nativelib.LazyFileSystemLoader

/**
 * Each file locality, on the files of a snapshot a real provider wrote: which SST files are local before the DB
 * opens, which it reads from the checkpoint, and what a restore counts as fetched and reused.
 */
class FileLocalitySuite extends AnyFunSuite {
  import FileLocalitySuite.Restore

  /** A checkpoint whose snapshot of version 3 holds some SST files; the store's files and that snapshot. */
  private def snapshotIn(dir: File): (CheckpointFiles, VersionFile, Seq[SstFile]) = {
    withProvider(newProvider(TtlProvider, dir, storeConf())) { p =>
      (0 until 3).foreach(v =>
        commitVersion(p, v.toLong, (0 until 2000).map(i => (s"user$v-$i", 0) -> Some(i.toLong)): _*))
      p.doMaintenance()
    }
    val files = new CheckpointFiles(new Path(dir.getAbsolutePath, "0/0"), new Configuration())
    val snapshot = VersionFile(3, None)
    val probe = new File(dir, "manifest-probe")
    probe.mkdirs()
    val ssts = files.restoreSmallFiles(snapshot, probe).sstFiles
    assert(ssts.nonEmpty, "the snapshot holds SST files")
    (files, snapshot, ssts)
  }

  private def sstsIn(dir: File): Set[String] = dir.listFiles().map(_.getName).filter(_.endsWith(".sst")).toSet

  private def settings(confs: (String, String)*): TtlStoreSettings = TtlStoreSettings.parse(confs.toMap)

  private def restore(dir: File, confs: (String, String)*): Restore = {
    val (files, snapshot, ssts) = snapshotIn(dir)
    val db = new File(dir, "db")
    db.mkdirs()
    val locality = FileLocality.choose("s", settings(confs: _*), files, () => Map.empty)
    Restore(locality, locality.fetch(snapshot, db, Map.empty), db, snapshot, ssts)
  }

  test("all local: every SST file is fetched before the DB opens, and the DB reads nothing from the checkpoint") {
    withTempDir { dir =>
      val Restore(locality, fetched, db, snapshot, ssts) = restore(dir)
      assert(locality.isInstanceOf[FileLocality.AllLocal])
      assert(sstsIn(db) == ssts.map(_.localName).toSet && fetched.remote.isEmpty)
      assert(fetched.counted.files == ssts.size && fetched.counted.reused == 0)
      assert(locality.serve(db, snapshot.version, fetched.remote).isEmpty)
    }
  }

  test("all local: a file the previous copy holds with the recorded size and CRC32C is reused, not fetched") {
    withTempDir { dir =>
      val (files, snapshot, ssts) = snapshotIn(dir)
      val previous = new File(dir, "previous"); previous.mkdirs()
      val locality = FileLocality.choose("s", settings(), files, () => Map.empty)
      locality.fetch(snapshot, previous, Map.empty)
      val db = new File(dir, "db"); db.mkdirs()
      val fetched = locality.fetch(snapshot, db, previous.listFiles().map(f => f.getName -> f).toMap)
      assert(fetched.counted.reused == ssts.size && fetched.counted.files == 0)
      assert(sstsIn(db) == ssts.map(_.localName).toSet)
    }
  }

  test("open first: only the small files come before the DB opens; it reads the SST files from the checkpoint") {
    assume(LazyFileSystemLoader.library.isRight, "the lazy file system loads on this platform")
    withTempDir { dir =>
      val Restore(locality, fetched, db, snapshot, ssts) = restore(dir, TtlStoreConfig.LazyLoadEnabled.key -> "true")
      assert(locality.isInstanceOf[FileLocality.OpenFirst])
      assert(sstsIn(db).isEmpty && fetched.remote.map(_.localName) == ssts.map(_.localName))
      assert(fetched.counted.files == ssts.size, "files that come down after the DB opens count as fetched")
      val served = locality.serve(db, snapshot.version, fetched.remote)
      try {
        assert(served.isDefined)
        served.get.awaitLocal()
        assert(sstsIn(db) == ssts.map(_.localName).toSet, "every file came down")
      } finally served.foreach(_.close())
      assert(locality.serve(db, snapshot.version, Nil).isEmpty, "nothing to serve when every file is local")
    }
  }

  test("remote mode: the SST files stay in the checkpoint, nothing counts as fetched, and the DB is always served") {
    assume(LazyFileSystemLoader.library.isRight, "the lazy file system loads on this platform")
    withTempDir { dir =>
      val Restore(locality, fetched, db, _, ssts) = restore(dir, TtlStoreConfig.RemoteCacheMb.key -> "1")
      assert(locality.isInstanceOf[FileLocality.Remote] && !locality.scansKeys)
      assert(sstsIn(db).isEmpty && fetched.remote.size == ssts.size && fetched.counted.files == 0)
      val empty = new File(dir, "empty"); empty.mkdirs()
      val served = locality.serve(empty, 0L, Nil)
      try assert(served.isDefined, "the files RocksDB writes are tracked too, to be demoted later")
      finally served.foreach(_.close())
    }
  }
}

object FileLocalitySuite {

  /** A snapshot written in `dir`, fetched into an empty `db` by the locality `confs` choose. */
  final case class Restore(locality: FileLocality, fetched: FileLocality.Fetched, db: File,
      snapshot: VersionFile, ssts: Seq[SstFile])
}
