package io.ttlstore.readahead

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** The read-ahead node's iterator: rows unchanged, in order, a bounded number held, keys asked before their rows. */
class ReadAheadIteratorSuite extends AnyFunSuite {

  /** Rows (id, name) as Spark's operators hand them on: one UnsafeRow object reused for every row. */
  private final class Input(n: Int, nameBytes: Int = 8) extends Iterator[InternalRow] {
    private val project = UnsafeProjection.create(Array[org.apache.spark.sql.types.DataType](LongType, StringType))
    private val name = UTF8String.fromString("x" * nameBytes)
    var pulled = 0
    override def hasNext: Boolean = pulled < n
    override def next(): InternalRow = {
      pulled += 1
      project(InternalRow(pulled.toLong, name))
    }
  }

  /** A store that records what it is asked and whether it wants reading ahead. */
  private final class Store(wants: => Boolean = true) extends ReadAheadTarget {
    val asked = mutable.ArrayBuffer.empty[Long]
    var sends = 0
    var questions = 0
    override def wanted(): Boolean = { questions += 1; wants }
    override def ask(key: UnsafeRow): Unit = asked += key.getLong(0)
    override def send(): Unit = sends += 1
  }

  private val keyOf = UnsafeProjection.create(Seq(BoundReference(0, LongType, nullable = false)))

  private def ids(rows: Iterator[InternalRow]): Seq[Long] = rows.map(_.getLong(0)).toList

  test("every row comes out once, unchanged and in its order, read ahead or not") {
    for (store <- Seq(Some(new Store), Some(new Store(false)), None)) {
      val out = ids(new ReadAheadIterator(new Input(2500), keyOf, () => store, rows = 100, maxBytes = 1L << 20))
      assert(out == (1L to 2500L))
    }
  }

  test("the store is asked for each row's key before the operator gets the row, at most `rows` rows held") {
    val (input, store) = (new Input(1000), new Store)
    val it = new ReadAheadIterator(input, keyOf, () => Some(store), rows = 100, maxBytes = 1L << 20)
    var handed = 0
    while (it.hasNext) {
      val id = it.next().getLong(0)
      handed += 1
      assert(store.asked.contains(id), s"row $id handed before its key was asked")
      assert(input.pulled - handed <= 100, s"${input.pulled - handed} rows held")
    }
    assert(store.asked == (1L to 1000L) && store.sends == 20)
  }

  test("no more bytes than maxBytes are held, however many rows that is") {
    val input = new Input(1000, nameBytes = 1000)
    val it = new ReadAheadIterator(input, keyOf, () => Some(new Store), rows = 1000, maxBytes = 64L << 10)
    var handed = 0
    while (it.hasNext) {
      it.next()
      handed += 1
      assert((input.pulled - handed) * 1000L <= (64L << 10) + 2000L)
    }
  }

  test("rows of a task whose store is not found, or does not want reading ahead, pass through without a copy") {
    for (store <- Seq(None, Some(new Store(false)))) {
      val input = new Input(10)
      val it = new ReadAheadIterator(input, keyOf, () => store, rows = 100, maxBytes = 1L << 20)
      val first = it.next()
      assert(input.pulled == 1)
      assert(first eq it.next(), "the input's reused row is handed on as it is")
    }
  }

  test("a store that declines is asked again a chunk's rows later, not at every row") {
    val store = new Store(false)
    ids(new ReadAheadIterator(new Input(1000), keyOf, () => Some(store), rows = 100, maxBytes = 1L << 20))
    assert(store.questions == 20)
  }

  test("a store that wants one chunk in three gets every third chunk's keys, the rows between passed on") {
    var n = 0
    val store = new Store({ n += 1; n % 3 == 1 })
    assert(ids(new ReadAheadIterator(new Input(1500), keyOf, () => Some(store), rows = 100, maxBytes = 1L << 20)) ==
      (1L to 1500L))
    assert(store.asked.size == 500 && store.asked.take(50) == (1L to 50L))
  }
}
