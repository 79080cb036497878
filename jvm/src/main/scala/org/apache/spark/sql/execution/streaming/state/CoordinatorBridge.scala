package org.apache.spark.sql.execution.streaming.state

/**
 * ttlstore's bridge to Spark's state store coordinator: reporting a snapshot upload
 * (`StateStoreCoordinatorRef.snapshotUploaded`, through the executor's cached
 * `StateStoreProvider.coordinatorRef`) is private to Spark's packages, so this object (in Spark's
 * package) does only that, as Spark's own providers do after each upload.
 */
object CoordinatorBridge {

  /** Tells the coordinator, if this JVM reaches one, that `store` uploaded a snapshot of `version`. */
  def snapshotUploaded(store: StateStoreProviderId, version: Long, atMs: Long): Unit =
    StateStoreProvider.coordinatorRef.foreach(_.snapshotUploaded(store, version, atMs))
}
