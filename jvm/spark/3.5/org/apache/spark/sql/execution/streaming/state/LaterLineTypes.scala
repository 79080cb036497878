package org.apache.spark.sql.execution.streaming.state

import org.apache.spark.sql.types.StructType

// The types of Spark 4's state store API that ttlstore's shared sources name and Spark 3.5 lacks,
// as 4.0 declares them, so that one source serves both. Only ttlstore's 3.5 jar carries them.

/** How a store's keys are encoded: 3.5's `numColsPrefixKey`, in 4.x's terms. */
trait KeyStateEncoderSpec { def keySchema: StructType }
case class NoPrefixKeyStateEncoderSpec(keySchema: StructType) extends KeyStateEncoderSpec
case class PrefixKeyScanStateEncoderSpec(keySchema: StructType, numColsPrefixKey: Int) extends KeyStateEncoderSpec

/** 4.x's schema provider for column families, which 3.5 never passes. */
trait StateSchemaProvider

/** An iterator over a store's rows that frees what it holds when closed. */
class StateStoreIterator[A](iter: Iterator[A], onClose: () => Unit = () => ()) extends Iterator[A]
  with java.io.Closeable {
  override def hasNext: Boolean = iter.hasNext
  override def next(): A = iter.next()
  override def close(): Unit = onClose()
}

/** What a commit tells Spark 4.x's driver; 3.5's never asks. */
case class StateStoreCheckpointInfo(partitionId: Int, batchVersion: Long, stateStoreCkptId: Option[String],
    baseStateStoreCkptId: Option[String])

/** The kinds of change in 4.x's change feed. */
object RecordType extends Enumeration {
  val PUT_RECORD, DELETE_RECORD = Value
}
