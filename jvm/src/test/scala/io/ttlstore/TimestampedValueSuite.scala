package io.ttlstore

import scala.io.Source

import org.scalatest.funsuite.AnyFunSuite
import io.ttlstore.store.codec.TimestampedValue

class TimestampedValueSuite extends AnyFunSuite {

  private case class Vector(name: String, stored: Array[Byte], timestamp: Option[Long])

  private lazy val golden: Seq[Vector] = {
    val source = Source.fromResource("golden/timestamped-values.tsv")
    try source.getLines().filterNot(l => l.startsWith("#") || l.isBlank).map { line =>
        val fields = line.split("\t", -1)
        assert(fields.length == 3, s"golden line has ${fields.length} fields: $line")
        val (name, hex, ts) = (fields(0), fields(1), fields(2))
        Vector(name, hex.grouped(2).filter(_.nonEmpty).map(Integer.parseInt(_, 16).toByte).toArray,
          if (ts == "none") None else Some(ts.toLong))
      }.toSeq
    finally source.close()
  }

  test("the golden vectors decode to their timestamps, and short values carry none") {
    assert(golden.size >= 8)
    golden.foreach { v =>
      assert(TimestampedValue.hasTimestamp(v.stored) == v.timestamp.isDefined, v.name)
      v.timestamp.foreach(ts => assert(TimestampedValue.timestamp(v.stored) == ts, v.name))
    }
  }

  test("encoding puts the timestamp big-endian in the first 8 bytes and the row after it") {
    golden.filter(_.timestamp.isDefined).foreach { v =>
      val row = v.stored.drop(8)
      assert(TimestampedValue.encode(v.timestamp.get, row).sameElements(v.stored), v.name)
    }
    val stored = TimestampedValue.encode(0x0102030405060708L, Array[Byte](9, 9, 9, 9, 9, 9, 9, 9))
    assert(stored.toSeq == Seq[Byte](1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 9, 9, 9, 9))
    assert(TimestampedValue.rowOffset == 8 && TimestampedValue.rowLength(stored) == 8)
  }
}
