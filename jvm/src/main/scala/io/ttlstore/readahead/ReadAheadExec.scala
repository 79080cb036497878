package io.ttlstore.readahead

import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder, UnsafeProjection}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.streaming.state.StateStoreId

/**
 * The node [[ReadAheadRule]] places under a stateful operator ttlstore serves: its rows, their order and
 * partitioning are its child's; in each task it reads ahead of the operator ([[ReadAheadIterator]]), handing the
 * state keys of the rows ahead (`keys`, projected from the child's output as the operator projects them) to the
 * operator's store of the same task and partition (the operator's `checkpoint` and `operatorId`). It never writes
 * state and never changes a row.
 */
final case class ReadAheadExec(
    keys: Seq[Attribute],
    checkpoint: String,
    operatorId: Long,
    rows: Int,
    maxBytes: Long,
    child: SparkPlan)
  extends UnaryExecNode {

  override def nodeName: String = "TtlStoreReadAhead"
  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override protected def doExecute(): RDD[InternalRow] = {
    val (keys, input, checkpoint, operatorId) = (this.keys, child.output, this.checkpoint, this.operatorId)
    val (rows, maxBytes) = (this.rows, this.maxBytes)
    child.execute().mapPartitionsWithIndex(
      { (partition, iter) =>
        val slot = ReadAheadTargets.Slot(StateStoreId(checkpoint, operatorId, partition),
          Option(TaskContext.get()).map(_.taskAttemptId()).getOrElse(-1L))
        new ReadAheadIterator(iter, UnsafeProjection.create(keys, input), () => ReadAheadTargets.find(slot), rows,
          maxBytes)
      },
      preservesPartitioning = true)
  }

  override protected def withNewChildInternal(newChild: SparkPlan): ReadAheadExec = copy(child = newChild)
}
