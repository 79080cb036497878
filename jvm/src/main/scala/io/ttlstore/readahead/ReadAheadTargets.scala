package io.ttlstore.readahead

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.sql.execution.streaming.state.StateStoreId

/**
 * The store versions tasks hold open, by store and task attempt: a version joins when it opens and leaves when it
 * ends, and the read-ahead node of the same task finds the store's target here. Spark's `StateStoreRDD` opens the
 * operator's store before it pulls a row of its input, so the node finds it at its first row. Versions of one store
 * in one task (an aggregation reads its store, then writes it) share one target, which ends with the last of them,
 * so that the version Spark reports metrics of counts what the node read ahead.
 */
object ReadAheadTargets {

  /** One store of one task attempt. */
  final case class Slot(store: StateStoreId, taskAttempt: Long)

  private final class Held(val target: ReadAheadTarget, var versions: Int)

  private val open = new ConcurrentHashMap[Slot, Held]()

  /** The target of `slot`, joined by one more version: the one there, or `create`d. */
  def join[T <: ReadAheadTarget](slot: Slot)(create: => T): T =
    open.compute(slot,
      (_, held) =>
        if (held != null) { held.versions += 1; held }
        else new Held(create, 1)).target.asInstanceOf[T]

  /** A version of `slot` ended; true if it was the last, and the target was removed. */
  def leave(slot: Slot): Boolean = {
    var last = false
    open.computeIfPresent(slot,
      (_, held) => {
        held.versions -= 1
        last = held.versions == 0
        if (last) null else held
      })
    last
  }

  def find(slot: Slot): Option[ReadAheadTarget] = Option(open.get(slot)).map(_.target)

  /** Versions open now (for tests: none stays behind its task). */
  def size: Int = open.size
}
