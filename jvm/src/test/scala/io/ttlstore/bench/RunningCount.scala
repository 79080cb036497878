package io.ttlstore.bench

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode}

/**
 * The size ladder's `flatMapGroupsWithState` workload (tests/bench/ladder.py builds it through
 * py4j): a running count per key kept in the group's state, one output row per key and batch.
 * Written in Scala because the Python counterpart (applyInPandasWithState) spends ~1 ms per group
 * in the Python worker, which would measure Arrow and pandas instead of the state store.
 */
object RunningCount {

  /** `keys` has a long column `key`; the result has `key` and `count`, for update mode. */
  def apply(keys: DataFrame): DataFrame = {
    import keys.sparkSession.implicits._
    keys.select($"key").as[Long]
      .groupByKey(identity)
      .flatMapGroupsWithState(OutputMode.Update, GroupStateTimeout.NoTimeout) {
        (key: Long, rows: Iterator[Long], state: GroupState[Long]) =>
          val count = state.getOption.getOrElse(0L) + rows.size
          state.update(count)
          Iterator.single((key, count))
      }
      .toDF("key", "count")
  }
}
