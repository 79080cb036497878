package io.ttlstore.store.local

import java.io.File
import java.util.UUID

import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.store.rocksdb.RocksDbHandle

/**
 * For soak tests only ([[io.ttlstore.config.TestHooks]]' `leak`): what every load of a store leaks, so that a soak shows that it
 * finds a leak of the kinds that have hit RocksDB users (an iterator or an instance never closed grows
 * native memory, open files and disk until the executor dies). Off (the default), a load leaks nothing.
 */
private[store] object InjectedLeak {

  /** `load`'s result, after leaking what `settings` asks for: from the DB `db` gives, or in `workDir`. */
  def after[T](settings: TtlStoreSettings, workDir: File, db: () => RocksDbHandle)(load: => T): T = {
    val result = load
    settings.hooks.leak match {
      case Some("iterator") => Option(db()).foreach(_.newIterator()) // never closed
      case Some("store") => // opened in the working copy and never closed
        RocksDbHandle.open(new File(workDir, s"leaked-${UUID.randomUUID()}"), "leaked", settings)
      case _ =>
    }
    result
  }
}
