package io.ttlstore.store.rocksdb

import org.rocksdb.{RocksDBException, RocksIterator}

/**
 * RocksDB's iterator over one column family of a store's DB, whose end is checked. An iteration that fails to read
 * (a damaged block, a file gone from the checkpoint, a read error) ends as if the rows ran out, with the failure in
 * the iterator's status: here the first position found not valid throws it instead, as `failed` names it (as the
 * DB's handle names its failures), so that a scan never returns part of the rows as if they were all.
 */
final class CheckedIterator private[rocksdb] (it: RocksIterator, failed: RocksDBException => Throwable)
  extends AutoCloseable {
  def seekToFirst(): Unit = it.seekToFirst()
  def seek(key: Array[Byte]): Unit = it.seek(key)

  def isValid: Boolean = it.isValid || {
    try it.status()
    catch { case e: RocksDBException => throw failed(e) }
    false
  }

  def key(): Array[Byte] = it.key()
  def value(): Array[Byte] = it.value()
  def next(): Unit = it.next()
  override def close(): Unit = it.close()
}
