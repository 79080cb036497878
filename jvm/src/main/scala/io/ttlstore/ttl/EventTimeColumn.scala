package io.ttlstore.ttl

import java.util.Locale

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types._

import io.ttlstore.errors.TtlStoreErrors

/**
 * Reads a row's event time from the state row itself: a timestamp (microseconds, read as
 * milliseconds rounded down) or long (epoch milliseconds) field of the key or value row, found by a
 * path such as `window.end`. The key row is searched first. Built once per store at `init`.
 */
final class EventTimeColumn private (inKey: Boolean, ordinals: Array[Int], widths: Array[Int],
    micros: Boolean) {

  /** The row's event time in epoch milliseconds, or [[EventTimeColumn.NoTime]] when null. */
  def millis(key: UnsafeRow, value: UnsafeRow): Long = {
    var row: InternalRow = if (inKey) key else value
    var i = 0
    while (i < ordinals.length - 1) {
      if (row.isNullAt(ordinals(i))) return EventTimeColumn.NoTime
      row = row.getStruct(ordinals(i), widths(i))
      i += 1
    }
    val last = ordinals(ordinals.length - 1)
    if (row.isNullAt(last)) EventTimeColumn.NoTime
    else if (micros) Math.floorDiv(row.getLong(last), 1000L)
    else row.getLong(last)
  }
}

object EventTimeColumn {

  /** A null event time: the row is stamped with the store's stream time instead. */
  val NoTime: Long = Long.MinValue

  /**
   * Resolves `path` against the key schema, then the value schema; a path that is missing or not a
   * timestamp/long fails naming `key` (the setting) and `store`.
   */
  def resolve(path: String, keySchema: StructType, valueSchema: StructType, key: String,
      store: String): EventTimeColumn = {
    val parts = path.split('.')

    /** The ordinals, struct widths and type of the path in `schema`, or what is wrong with it. */
    def find(schema: StructType): Either[String, (Array[Int], Array[Int], DataType)] = {
      def walk(
          t: DataType, i: Int, ords: List[Int], ws: List[Int]): Either[String, (Array[Int], Array[Int], DataType)] =
        if (i == parts.length) Right((ords.reverse.toArray, ws.reverse.toArray, t))
        else t match {
          case s: StructType =>
            val idx = fieldIndex(s, parts(i))
            if (idx < 0) Left(s"no field '${parts(i)}' in ${s.simpleString}")
            else {
              val inner = s.fields(idx).dataType
              val width = inner match { case st: StructType => st.length; case _ => 0 }
              walk(inner, i + 1, idx :: ords, width :: ws)
            }
          case other => Left(s"'${parts.take(i).mkString(".")}' is ${other.simpleString}, not a struct")
        }
      walk(schema, 0, Nil, Nil)
    }
    val (inKey, located) = find(keySchema) match {
      case Right(r) => (true, r)
      case Left(keyProblem) => find(valueSchema) match {
          case Right(r) => (false, r)
          case Left(_) => throw TtlStoreErrors.eventTimeColumnInvalid(key, path, store,
              s"$keyProblem of the key, and the value ${valueSchema.simpleString} has no such field either")
        }
    }
    val (ordinals, widths, dataType) = located
    val micros = dataType match {
      case TimestampType | TimestampNTZType => true
      case LongType => false
      case other => throw TtlStoreErrors.eventTimeColumnInvalid(key, path, store,
          s"it is ${other.simpleString}, not a timestamp or long")
    }
    new EventTimeColumn(inKey, ordinals, widths, micros)
  }

  private def fieldIndex(s: StructType, name: String): Int = {
    val exact = s.fieldNames.indexOf(name)
    if (exact >= 0) exact
    else s.fieldNames.indexWhere(_.toLowerCase(Locale.ROOT) == name.toLowerCase(Locale.ROOT))
  }
}
