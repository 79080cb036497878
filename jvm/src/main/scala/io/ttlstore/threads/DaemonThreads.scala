package io.ttlstore.threads

import java.util.concurrent.{LinkedBlockingQueue, ThreadFactory, ThreadPoolExecutor, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

/**
 * The threads ttlstore runs beside Spark's, each named for its work (`ttlstore-<name>-<n>`): daemons, so that none
 * keeps an executor's JVM alive.
 */
object DaemonThreads {

  /** Makes daemon threads named `ttlstore-<name>-1`, `-2`, ... */
  def factory(name: String): ThreadFactory = {
    val count = new AtomicInteger()
    r => {
      val t = new Thread(r, s"ttlstore-$name-${count.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
  }

  /**
   * A pool of the executor's threads for one kind of work: as many threads as the largest bound asked of it
   * ([[GrowingPool.atLeast]]), idle ones ending after `idleSeconds`. It never shrinks: a pool made smaller lets a
   * thread above its new size take one more task, so the callers hold their own bound on what runs at once.
   */
  final class GrowingPool(name: String, idleSeconds: Long) {
    private val pool = new ThreadPoolExecutor(1, 1, idleSeconds, TimeUnit.SECONDS, new LinkedBlockingQueue[Runnable](),
      factory(name))
    pool.allowCoreThreadTimeOut(true)

    /** Grows the pool to `threads` if it is smaller. */
    def atLeast(threads: Int): Unit = synchronized {
      if (threads > pool.getMaximumPoolSize) {
        pool.setMaximumPoolSize(threads)
        pool.setCorePoolSize(threads)
      }
    }

    def execute(task: Runnable): Unit = pool.execute(task)
  }
}
