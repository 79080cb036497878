package io.ttlstore

import java.nio.file.Files
import java.util.{ArrayList => JArrayList}

import scala.jdk.CollectionConverters._

import org.apache.commons.io.FileUtils
import org.rocksdb._
import org.scalatest.funsuite.AnyFunSuite

/** The native TTL compaction filter inside a real RocksDB (the rocksdbjni Spark ships). */
class NativeFilterSuite extends AnyFunSuite {

  private def stored(ts: Long, row: Array[Byte]): Array[Byte] = TimestampedValue.encode(ts, row)

  private def key(i: Int): Array[Byte] = f"k$i%05d".getBytes("UTF-8")

  /** A DB whose `timestamped` family uses `filter` and whose `default` family uses none. */
  private def withDb[T](filter: TtlCompactionFilter)(body: (RocksDB, ColumnFamilyHandle, ColumnFamilyHandle) => T): T = {
    val dir = Files.createTempDirectory("ttlstore-filter").toFile
    val plain = new ColumnFamilyOptions()
    val filtered = new ColumnFamilyOptions().setCompactionFilter(filter)
    val options = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true)
    val handles = new JArrayList[ColumnFamilyHandle]()
    val db = RocksDB.open(options, dir.getAbsolutePath, Seq(
      new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, plain),
      new ColumnFamilyDescriptor("timestamped".getBytes("UTF-8"), filtered)).asJava, handles)
    try body(db, handles.get(0), handles.get(1))
    finally {
      handles.asScala.foreach(_.close()); db.close()
      filter.close(); filtered.close(); plain.close(); options.close()
      FileUtils.deleteQuietly(dir)
    }
  }

  private def contents(db: RocksDB, cf: ColumnFamilyHandle): Map[String, Seq[Byte]] = {
    val it = db.newIterator(cf)
    try {
      it.seekToFirst()
      Iterator.continually(it).takeWhile(_.isValid).map { i =>
        val kv = new String(i.key(), "UTF-8") -> i.value().toSeq; i.next(); kv
      }.toMap
    } finally it.close()
  }

  private def newFilter(ttlMs: Long, now: Long): TtlCompactionFilter =
    NativeFilter.create(ttlMs, now).fold(problem => fail(problem), identity)

  test(s"the library loads from the jar for this platform (${NativeFilter.platform}) and binds to RocksDB") {
    assert(NativeFilter.library.isRight, NativeFilter.library.left.getOrElse(""))
  }

  test("compaction removes exactly the expired rows and keeps the live ones byte for byte") {
    withDb(newFilter(ttlMs = 500, now = 1000)) { (db, legacy, timestamped) =>
      (0 until 1000).foreach(i => db.put(timestamped, key(i), stored(i.toLong, Array.fill(16)(i.toByte))))
      db.put(timestamped, "short".getBytes("UTF-8"), Array[Byte](1, 2, 3))
      db.put(timestamped, "empty".getBytes("UTF-8"), Array.emptyByteArray)
      (0 until 10).foreach(i => db.put(legacy, key(i), stored(0L, Array[Byte](1))))
      val before = contents(db, timestamped)
      db.compactRange(timestamped)
      db.compactRange(legacy)
      val after = contents(db, timestamped)
      val expected = before.filter { case (k, v) =>
        !TimestampedValue.hasTimestamp(v.toArray) ||
          !ExpiryRule.isExpired(TimestampedValue.timestamp(v.toArray), 500, 1000)
      }
      assert(after == expected)
      assert(after.size == 1000 - 501 + 2, "ts <= 500 expired; too short values kept")
      assert(contents(db, legacy).size == 10, "the family without the filter keeps everything")
    }
  }

  test("the pushed time takes effect at the next compaction, and the filter counts what it removed") {
    val filter = newFilter(ttlMs = 100, now = 0)
    withDb(filter) { (db, _, timestamped) =>
      (0 until 100).foreach(i => db.put(timestamped, key(i), stored(i.toLong, Array[Byte](7))))
      db.compactRange(timestamped)
      assert(contents(db, timestamped).size == 100 && filter.removedRows == 0)
      filter.setNow(150)
      db.put(timestamped, key(1000), stored(150L, Array[Byte](7))) // a new file, so compaction runs
      db.compactRange(timestamped)
      assert(contents(db, timestamped).size == 100 - 51 + 1)
      assert(filter.removedRows == 51)
    }
    assert(filter.removedRows == 0, "a closed filter reads nothing freed")
  }
}
