package io.ttlstore.readahead

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * A store version a task holds open, as the read-ahead node ([[ReadAheadExec]]) sees it: the node hands it the
 * state keys of the rows it reads ahead, and the store brings their state in, in other threads, before the operator
 * asks for it. Called on the task's thread only. Nothing it does changes what a read returns.
 */
trait ReadAheadTarget {

  /** True if the next rows should be read ahead: the store decides from what reading ahead brought it lately. */
  def wanted(): Boolean

  /** Takes one state key, in the operator's key layout (encoded at once: the row may be reused). */
  def ask(key: UnsafeRow): Unit

  /** Starts reading the keys asked since the last call, in other threads; returns at once. */
  def send(): Unit
}
