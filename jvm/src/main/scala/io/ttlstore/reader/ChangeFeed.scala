package io.ttlstore.reader

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state.RecordType

import io.ttlstore.checkpoint.{Changelog, ChangelogReader, CheckpointFiles, VersionFile}
import io.ttlstore.store.codec.{KeyCodec, TimestampedValue}

/**
 * The change feed of one store for Spark's state reader (`readChangeFeed`): every put and delete
 * of the changelogs of `versions` (consecutive; under checkpoint format v2 the attempts a lineage
 * names), in order, as
 * `(record type, key, value or null, batch id = version - 1)`. It reads the checkpoint only.
 * Expired rows removed by the store appear as the deletes they were logged as; rows the native
 * filter dropped were never logged, like rows a query never touched again.
 */
final class ChangeFeed(
    files: CheckpointFiles,
    versions: Seq[VersionFile],
    keyCodec: KeyCodec,
    valueFields: Int) extends Iterator[ChangeFeed.Change] with AutoCloseable {

  private val pending = versions.iterator
  private var version = -1L
  private var reader: ChangelogReader = _
  private var upcoming: ChangeFeed.Change = _
  private var finished = false

  override def hasNext: Boolean = {
    if (upcoming == null && !finished) upcoming = advance()
    upcoming != null
  }

  override def next(): ChangeFeed.Change = {
    if (!hasNext) throw new NoSuchElementException("the change feed has ended")
    val change = upcoming
    upcoming = null
    change
  }

  private def advance(): ChangeFeed.Change = {
    var result: ChangeFeed.Change = null
    while (result == null && !finished) {
      if (reader == null) {
        if (!pending.hasNext) finished = true
        else {
          val file = pending.next()
          version = file.version
          reader = files.openChangelog(file)
        }
      } else {
        reader.next() match {
          case Some(Changelog.Put(k, v)) =>
            val value = KeyCodec.rowAt(valueFields, v, TimestampedValue.rowOffset, TimestampedValue.rowLength(v))
            result = (RecordType.PUT_RECORD, keyCodec.decode(k), value, version - 1)
          case Some(Changelog.Delete(k)) =>
            result = (RecordType.DELETE_RECORD, keyCodec.decode(k), null, version - 1)
          case None =>
            reader.close()
            reader = null
        }
      }
    }
    result
  }

  override def close(): Unit = {
    finished = true
    if (reader != null) { reader.close(); reader = null }
  }
}

object ChangeFeed {

  /** (record type, key, value or null for a delete, batch id). */
  type Change = (RecordType.Value, UnsafeRow, UnsafeRow, Long)
}
