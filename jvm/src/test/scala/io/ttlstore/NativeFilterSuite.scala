package io.ttlstore

import java.nio.file.Files
import java.util.{ArrayList => JArrayList}

import scala.jdk.CollectionConverters._

import org.apache.commons.io.FileUtils
import org.rocksdb._
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.ttl.ExpiryRule
import io.ttlstore.store.codec.TimestampedValue
import io.ttlstore.store.nativelib.{NativeFilter, NativeFilterLoader, TtlCompactionFilter}

/** The native TTL compaction filter inside a real RocksDB (the rocksdbjni Spark ships). */
class NativeFilterSuite extends AnyFunSuite {

  private def stored(ts: Long, row: Array[Byte]): Array[Byte] = TimestampedValue.encode(ts, row)

  private def key(i: Int): Array[Byte] = f"k$i%05d".getBytes("UTF-8")

  /** A DB whose `timestamped` family uses `filter` and whose `default` family uses none. */
  private def withDb[T](filter: TtlCompactionFilter)(body: (RocksDB, ColumnFamilyHandle, ColumnFamilyHandle) => T): T =
    withFamilies(Seq(None, Some(filter))) { (db, handles) => body(db, handles(0), handles(1)) }

  /** A DB with one family per entry (the first is `default`), each with its filter if any. */
  private def withFamilies[T](filters: Seq[Option[TtlCompactionFilter]], dir: Option[java.io.File] = None)(
      body: (RocksDB, Seq[ColumnFamilyHandle]) => T): T = {
    val where = dir.getOrElse(Files.createTempDirectory("ttlstore-filter").toFile)
    val familyOptions =
      filters.map(f => f.fold(new ColumnFamilyOptions())(new ColumnFamilyOptions().setCompactionFilter(_)))
    val options = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true)
    val handles = new JArrayList[ColumnFamilyHandle]()
    val names = RocksDB.DEFAULT_COLUMN_FAMILY +: filters.indices.tail.map(i => s"family$i".getBytes("UTF-8"))
    val db = RocksDB.open(options, where.getAbsolutePath,
      names.zip(familyOptions).map { case (n, o) => new ColumnFamilyDescriptor(n, o) }.asJava, handles)
    try body(db, handles.asScala.toSeq)
    finally {
      handles.asScala.foreach(_.close()); db.close()
      filters.flatten.foreach(_.close()); familyOptions.foreach(_.close()); options.close()
      if (dir.isEmpty) FileUtils.deleteQuietly(where)
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

  test("each family's filter applies its own TTL") {
    val short = newFilter(ttlMs = 10, now = 100)
    val long = newFilter(ttlMs = 1000, now = 100)
    withFamilies(Seq(None, Some(short), Some(long))) { (db, families) =>
      Seq(families(1), families(2)).foreach { cf =>
        (0 until 50).foreach(i => db.put(cf, key(i), stored(i.toLong, Array[Byte](1))))
        db.compactRange(cf)
      }
      assert(contents(db, families(1)).size == 0, "TTL 10 at 100: every row stamped 0..49 expired")
      assert(contents(db, families(2)).size == 50, "TTL 1000 at 100: none expired")
      assert(short.removedRows == 50 && long.removedRows == 0)
    }
  }

  test("a TTL pushed later takes effect, and TTL 0 removes nothing") {
    val filter = newFilter(ttlMs = 0, now = 1000)
    withDb(filter) { (db, _, timestamped) =>
      (0 until 20).foreach(i => db.put(timestamped, key(i), stored(i.toLong, Array[Byte](1))))
      db.compactRange(timestamped)
      assert(contents(db, timestamped).size == 20, "TTL off")
      filter.setTtl(990)
      db.put(timestamped, key(100), stored(1000L, Array[Byte](1)))
      db.compactRange(timestamped)
      assert(contents(db, timestamped).keySet == (11 until 20).map(i => new String(key(i), "UTF-8")).toSet + "k00100")
    }
  }

  test("a reopened DB with a new filter keeps the live rows and filters by the new filter's time") {
    withTempDirectory { dir =>
      withFamilies(Seq(None, Some(newFilter(ttlMs = 10, now = 0))), Some(dir)) { (db, families) =>
        (0 until 30).foreach(i => db.put(families(1), key(i), stored(i.toLong, Array[Byte](1))))
        db.compactRange(families(1))
      }
      val reopened = newFilter(ttlMs = 10, now = 25)
      withFamilies(Seq(None, Some(reopened)), Some(dir)) { (db, families) =>
        assert(contents(db, families(1)).size == 30, "nothing was expired before the restart")
        db.put(families(1), key(99), stored(25L, Array[Byte](1)))
        db.compactRange(families(1))
        assert(contents(db, families(1)).size == 30 - 16 + 1 && reopened.removedRows == 16)
      }
    }
  }

  test("a loader without the library says which resource it looked for, every time it is asked") {
    val loader = new NativeFilterLoader("/io/ttlstore/native/nowhere/libttlstore_filter.so")
    val first = loader.library
    assert(first.isLeft && first.left.exists(_.contains("/io/ttlstore/native/nowhere/libttlstore_filter.so")))
    assert(loader.library eq first, "the failure is remembered, not retried")
    assert(loader.create(10, 0).isLeft)
    assert(NativeFilter.loader() eq NativeFilter.loader(), "one loader per resource and JVM")
  }

  private def withTempDirectory[T](body: java.io.File => T): T = {
    val dir = Files.createTempDirectory("ttlstore-filter").toFile
    try body(dir)
    finally FileUtils.deleteQuietly(dir)
  }
}
