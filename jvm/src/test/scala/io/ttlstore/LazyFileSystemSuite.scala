package io.ttlstore

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

import scala.io.Source

import org.apache.commons.io.FileUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.rocksdb.{BlockBasedTableConfig, FlushOptions, Options, RocksDB, RocksDBException}
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.CheckpointRangedReads
import io.ttlstore.spark.SparkClasses.CheckpointFileManager
import io.ttlstore.store.lazyfs.LazyFileSystem
import io.ttlstore.store.nativelib.{LazyFileSystemLoader, NativeFilter}

/**
 * The lazy file system as the jar ships it (issue 51): loaded by its loader into the JVM's RocksDB, a DB whose SST
 * files are only in a checkpoint directory opens and reads them through Hadoop's file system, and reads a file
 * locally once it is brought down. (`make test-native-fs` proves it on every rocksdbjni under sanitizers.)
 */
class LazyFileSystemSuite extends AnyFunSuite {
  private val Keys = 20000

  private def key(i: Int): Array[Byte] = s"k$i".getBytes("UTF-8")

  private def options(): Options =
    // No block cache: every read of a block reaches the file system.
    new Options().setCreateIfMissing(true).setMaxOpenFiles(-1).setDisableAutoCompactions(true)
      .setTableFormatConfig(new BlockBasedTableConfig().setNoBlockCache(true))

  private def sstFiles(dir: File): Seq[File] =
    Option(dir.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".sst")).sortBy(_.getName)

  /** A DB of four flushed files (the last holds every key's latest value, "v3"), moved into `checkpoint`. */
  private def checkpointed(work: File): (File, Seq[File]) = {
    val source = new File(work, "db")
    val flush = new FlushOptions().setWaitForFlush(true)
    val o = options()
    val db = RocksDB.open(o, source.getPath)
    try (0 until 4).foreach { round =>
        (0 until Keys).foreach(i => db.put(key(i * 7919 % Keys), s"v$round".getBytes("UTF-8")))
        db.flush(flush)
      }
    finally { db.close(); o.close(); flush.close() }
    val checkpoint = new File(work, "checkpoint")
    checkpoint.mkdirs()
    val ssts = sstFiles(source).map(f => Files.move(f.toPath, new File(checkpoint, f.getName).toPath).toFile)
    (source, ssts)
  }

  /** A lazy DB in `local` over `source`'s small files and the checkpoint's SSTs, read through Hadoop's FS. */
  private def withLazyDb[T](work: File)(body: (RocksDB, LazyFileSystem, Seq[File], File) => T): T = {
    val (source, ssts) = checkpointed(work)
    val local = new File(work, "local")
    FileUtils.copyDirectory(source, local)
    val root = new Path(ssts.head.getParentFile.toURI)
    val reads = new CheckpointRangedReads(CheckpointFileManager.create(root, new Configuration()),
      ssts.map(f => new Path(f.toURI) -> f.length()).toIndexedSeq)
    val fs = new LazyFileSystem(reads)
    ssts.zipWithIndex.foreach { case (f, i) => fs.serveRemotely(new File(local, f.getName).getPath, f.length(), i) }
    val o = options().setEnv(fs.rocksEnv())
    val db = RocksDB.open(o, local.getPath)
    try body(db, fs, ssts, local)
    finally { db.close(); o.close(); fs.close(); reads.close() }
  }

  private def withWork[T](body: File => T): T = {
    val work = Files.createTempDirectory("ttlstore-lazy-fs").toFile
    try body(work)
    finally FileUtils.deleteQuietly(work)
  }

  private def latest(db: RocksDB): Int =
    (0 until Keys).count(i => Option(db.get(key(i))).exists(new String(_, "UTF-8") == "v3"))

  private def librocksdbjniMapped(): Set[String] = {
    val maps = Source.fromFile("/proc/self/maps")
    try maps.getLines().flatMap(l => Some(l.indexOf('/')).filter(_ >= 0).map(l.substring)).filter(
        _.contains("librocksdbjni")).toSet
    finally maps.close()
  }

  test(s"the lazy file system loads from the jar for this platform (${NativeFilter.platform}) into the JVM's RocksDB") {
    RocksDB.loadLibrary()
    val bound = LazyFileSystemLoader.library.fold(problem => fail(problem), identity)
    assert(librocksdbjniMapped() == Set(bound))
  }

  test("a DB whose SST files are all in the checkpoint opens without them and reads every key by ranged reads") {
    withWork { work =>
      withLazyDb(work) { (db, fs, ssts, local) =>
        assert(sstFiles(local).isEmpty)
        assert(fs.counts().remoteOpens == ssts.size)
        assert(latest(db) == Keys)
        assert(fs.counts().rangedReads >= Keys)
      }
    }
  }

  test("a file brought down and marked local is read locally from then on by the readers already open") {
    withWork { work =>
      withLazyDb(work) { (db, fs, ssts, local) =>
        assert(latest(db) == Keys)
        ssts.foreach { f =>
          Files.copy(f.toPath, new File(local, f.getName).toPath, StandardCopyOption.REPLACE_EXISTING)
          assert(fs.markLocal(new File(local, f.getName).getPath))
        }
        val before = fs.counts()
        assert(before.remoteFiles == 0)
        assert(latest(db) == Keys)
        assert(fs.counts().rangedReads == before.rangedReads)
        assert(fs.counts().switchedReads - before.switchedReads >= Keys)
      }
    }
  }

  test("a ranged read the checkpoint cannot serve fails the read, naming the checkpoint file") {
    withWork { work =>
      withLazyDb(work) { (db, _, ssts, _) =>
        val newest = ssts.last
        Files.write(newest.toPath, Files.readAllBytes(newest.toPath).take((newest.length() / 2).toInt))
        val failed = intercept[RocksDBException](latest(db))
        assert(failed.getMessage.contains(newest.getName), failed.getMessage)
      }
    }
  }
}
