package io.ttlstore.errors

/** The one place that builds [[TtlStoreException]]s, so names and wording stay consistent. */
object TtlStoreErrors {

  private[errors] def error(name: String, params: (String, Any)*)(message: String): TtlStoreException =
    new TtlStoreException(name, ErrorConditions.sqlState(name), javaParams(params), message, null)

  private[errors] def errorWithCause(name: String, cause: Throwable, params: (String, Any)*)(
      message: String): TtlStoreException =
    new TtlStoreException(name, ErrorConditions.sqlState(name), javaParams(params), message, cause)

  private def javaParams(params: Seq[(String, Any)]): java.util.Map[String, String] = {
    val out = new java.util.LinkedHashMap[String, String]()
    params.foreach { case (k, v) => out.put(k, String.valueOf(v)) }
    out
  }

  /** `"name"`: a quote inside an interpolated string, which Scala 2.12 cannot escape. */
  private def quoted(name: String): String = "\"" + name + "\""

  def invalidConfig(key: String, value: String, allowed: String): TtlStoreException =
    error("INVALID_CONFIG", "key" -> key, "value" -> value, "allowed" -> allowed)(
      s"Invalid value '$value' for $key: expected $allowed. Fix the setting and restart the query.")

  /** A size of one memory mode set while the other is on (it would size nothing). */
  def settingOfOtherMemoryMode(key: String, modeKey: String, bounded: Boolean, useKey: String): TtlStoreException =
    error("SETTING_OF_OTHER_MEMORY_MODE", "key" -> key, "mode" -> s"$modeKey=$bounded")(
      s"$key applies only with $modeKey=${!bounded}, and $modeKey is $bounded: " +
        (if (bounded) s"the executor's stores share one budget of $useKey. Set $useKey instead, or $modeKey=false."
         else s"the block cache is sized by $useKey and memtables are not bounded. Remove $key, or set $modeKey=true."))

  /** An explicit memory budget that the executors' overhead, which a container limit enforces, cannot hold. */
  def budgetExceedsOverhead(
      key: String,
      budgetMiB: Long,
      overheadMiB: Long,
      overheadHow: String,
      manager: String,
      neededMiB: Long,
      atMostMiB: Long,
      derivedMiB: Long): TtlStoreException =
    error("BUDGET_EXCEEDS_OVERHEAD", "key" -> key, "value" -> budgetMiB, "overheadMiB" -> overheadMiB,
      "neededMiB" -> neededMiB)(
      s"$key=$budgetMiB does not fit the executors' memory overhead of $overheadMiB MiB ($overheadHow), " +
        s"which $manager enforces as part of each executor's memory limit: beside the budget, the " +
        s"overhead holds the JVM's own memory outside its heap and ttlstore's native memory outside the budget " +
        s"(as much again as the budget once reads churn a full cache), about ${neededMiB - budgetMiB} MiB, so the " +
        s"executor would be killed once the cache fills. Set spark.executor.memoryOverhead to at least " +
        s"$neededMiB MiB, or $key to at most $atMostMiB, or unset $key to let ttlstore derive $derivedMiB MiB " +
        "from the overhead.")

  def unknownConfig(key: String, known: Seq[String], scoped: Seq[String]): TtlStoreException =
    error("UNKNOWN_CONFIG", "key" -> key)(
      s"Unknown setting $key. ttlstore's settings are: ${known.mkString(", ")}; these can also " +
        s"be set per operator (operator.<id>.<name>) or store (operator.<id>.store.<store>.<name>): " +
        s"${scoped.mkString(", ")}. Check the spelling (see docs/configuration.md).")

  def eventTimeColumnMissing(timeKey: String, columnKey: String): TtlStoreException =
    error("EVENT_TIME_COLUMN_MISSING", "key" -> timeKey)(
      s"$timeKey is EventTime but no event time column is set: set $columnKey (or its operator/" +
        "store-scoped form) to a timestamp or long field of the state, such as window.end.")

  def eventTimeColumnInvalid(key: String, column: String, store: String, detail: String): TtlStoreException =
    error("EVENT_TIME_COLUMN_INVALID", "key" -> key, "column" -> column, "store" -> store)(
      s"$key names '$column', which cannot stamp the rows of $store: $detail. Name a timestamp " +
        "or long (epoch milliseconds) field of the state's key or value, such as window.end.")

  def ttlOnStreamStreamJoin(store: String, ttlKey: String, allowKey: String): TtlStoreException =
    error("TTL_ON_STREAM_STREAM_JOIN", "store" -> store, "key" -> ttlKey)(
      s"$ttlKey gives TTL to $store, a stream-stream join store. A join keeps a count store and " +
        "an index store per side that must agree, and expiring their rows independently can fail " +
        "the query or lose matches. Give the join operator no TTL (set " +
        "operator.<id>.ttl to 0), bound the join's state with a watermark, or set " +
        s"$allowKey=true to accept those risks (see docs/ttl.md).")

  def unknownOperator(key: String, operatorId: Long, known: Seq[(Long, String)]): TtlStoreException =
    error("UNKNOWN_OPERATOR", "key" -> key, "operatorId" -> operatorId)(
      s"$key names stateful operator $operatorId, which this query does not have. Its stateful " +
        s"operators are: ${if (known.isEmpty) "none" else known.map { case (i, n) => s"$i ($n)" }.mkString(", ")}. " +
        "Fix the operator id (see the query's progress, stateOperators).")

  def unknownStore(key: String, operatorId: Long, store: String, known: Seq[String]): TtlStoreException =
    error("UNKNOWN_STORE", "key" -> key, "store" -> store)(
      s"$key names store '$store' of operator $operatorId, which has the stores: " +
        s"${known.mkString(", ")}. Fix the store name.")

  def timeCharacteristicChanged(store: String, key: String, recorded: String, requested: String): TtlStoreException =
    error("TIME_CHARACTERISTIC_CHANGED", "store" -> store, "key" -> key)(
      s"The rows of $store are stamped in $recorded, but $key asks for $requested. Timestamps " +
        s"of one kind cannot be judged by the other: set $key back to $recorded, or run the query " +
        "from a new checkpoint.")

  def nativeFilterUnavailable(store: String, key: String, problem: String): TtlStoreException =
    error("NATIVE_FILTER_UNAVAILABLE", "store" -> store, "key" -> key, "problem" -> problem)(
      s"$key is true but the native TTL compaction filter cannot be used for $store: $problem. " +
        s"Use the ttlstore jar built for this platform, or set $key=auto to fall back to the JVM " +
        "sweep.")

  /** `setting` ("key=value") needs the lazy file system, which cannot serve `store`; `fallback` sets what works. */
  def lazyLoadUnavailable(store: String, setting: String, problem: String, fallback: String): TtlStoreException =
    error("LAZY_LOAD_UNAVAILABLE", "store" -> store, "key" -> setting.takeWhile(_ != '='), "problem" -> problem)(
      s"$setting needs $store to read SST files that are not local, which it cannot: the lazy file system " +
        s"$problem. Use the ttlstore jar built for this platform, or set $fallback.")

  def checkpointPinsAnotherProvider(checkpoint: String, pinned: String, providerKey: String): TtlStoreException =
    error("CHECKPOINT_PINS_ANOTHER_PROVIDER", "checkpoint" -> checkpoint, "provider" -> pinned)(
      s"The session asks for ttlstore ($providerKey names it), but the checkpoint $checkpoint " +
        s"was started on $pinned, and Spark keeps the provider a checkpoint started with (its offset log pins " +
        "it): the query would run without ttlstore and without TTL. To move this query to ttlstore, stop it " +
        s"and run `ttlstore migrate $checkpoint`. To keep it on $pinned beside ttlstore's queries, set " +
        s"$providerKey=$pinned in the session before starting it (spark.conf.set), and back " +
        "to ttlstore before starting a ttlstore query; ttlstore's settings may stay in the session " +
        "(docs/usage.md, \"One provider per query\").")

  /**
   * Spark 4.3 runs Real-Time Mode only on its own RocksDB provider: `StreamingQueryManager` refuses
   * any other `providerClass` set in the session (`STREAMING_REAL_TIME_MODE.SQL_CONFIGURATION_NOT_SUPPORTED`),
   * with no setting to allow it. A checkpoint that pins ttlstore in its offset log slips past that
   * check on restart; ttlstore refuses it as Spark would have.
   */
  def realTimeModeNotServed(checkpoint: String): TtlStoreException =
    error("REAL_TIME_MODE_NOT_SERVED", "checkpoint" -> checkpoint)(
      s"This query runs in Real-Time Mode (trigger(realTime=...)), which Spark 4.3 allows only on its own " +
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider: it refuses any other " +
        "spark.sql.streaming.stateStore.providerClass, and no setting allows one. It reached ttlstore because " +
        s"its checkpoint $checkpoint pins ttlstore in its offset log. Run it with a processing-time or " +
        "availableNow trigger to stay on ttlstore, or start the real-time query from a new checkpoint on " +
        "Spark's RocksDB provider.")

  /** A jar built for one Spark line (and Scala) loaded into a Spark of another (see BuiltFor). */
  def unprefixedSetting(key: String, suggestion: String): TtlStoreException =
    error("SETTING_WITHOUT_TTLSTORE_PREFIX", "key" -> key)(
      s"$key names no setting of Spark's, but looks like ttlstore's $suggestion without its " +
        s"'ttlstore.' segment. Set $suggestion instead; Spark ignores $key.")

  def unsupportedOperation(operation: String, why: String): TtlStoreException =
    error("UNSUPPORTED_OPERATION", "operation" -> operation)(
      s"ttlstore does not support $operation: $why")

  def storeNotUpdating(operation: String, store: String, state: String): TtlStoreException =
    error("STORE_NOT_UPDATING", "operation" -> operation, "store" -> store, "state" -> state)(
      s"Cannot $operation on $store: the store is $state. " +
        "A store version accepts changes only until it is committed, aborted or released.")

  def readOnlyStore(operation: String, store: String): TtlStoreException =
    error("READ_ONLY_STORE", "operation" -> operation, "store" -> store)(
      s"Cannot $operation on $store: it was opened read-only.")

  /** `changelog`: the file that would hold the version (None for a version no file can hold). */
  def versionNotFound(dir: String, version: Long, latest: Option[Long],
      changelog: Option[String] = None): TtlStoreException =
    error("STATE_VERSION_NOT_FOUND", "dir" -> dir, "version" -> version)(
      s"Version $version of the state in $dir cannot be loaded: neither a snapshot nor the " +
        s"changelogs that lead to it exist (latest committed version: " +
        s"${latest.map(_.toString).getOrElse("none")})." +
        changelog.map(f =>
          s" The changelog of version $version would be $f: if the query committed " +
            "this version, that file was deleted or lost; restore it from a backup.").getOrElse("") +
        " Otherwise the checkpoint is incomplete or was cleaned beyond " +
        "spark.sql.streaming.minBatchesToRetain.")

  /**
   * Under checkpoint format v2: the lineage that leads to (version, id) cannot be followed. `id` is
   * the checkpoint id Spark's commit log gave.
   */
  def checkpointLineageBroken(dir: String, version: Long, id: Option[String], why: String): TtlStoreException =
    error("CHECKPOINT_LINEAGE_BROKEN", "dir" -> dir, "version" -> version, "checkpointId" -> id.getOrElse(""))(
      s"Version $version${id.fold("")(i => s" (checkpoint id $i)")} of the state in $dir cannot be loaded: $why. " +
        "A file it needs was deleted or damaged; restore the store's ttlstore/ folder from a backup, " +
        "or restart the query from a new checkpoint.")

  /**
   * A store written in checkpoint format v1 asked for with a checkpoint id. Spark keeps the format a
   * checkpoint started with (its commit log decides), so this means the commit log or the store's
   * files were changed by hand.
   */
  def checkpointFormatMismatch(dir: String, version: Long): TtlStoreException =
    error("CHECKPOINT_FORMAT_MISMATCH", "dir" -> dir, "version" -> version)(
      s"Version $version of the state in $dir is asked for with a checkpoint id (checkpoint format v2, " +
        "spark.sql.streaming.stateStore.checkpointFormatVersion=2), but the store was written in format " +
        "v1 (its files carry no checkpoint ids). Spark keeps the format a checkpoint started with, as its " +
        "commit log records it; the commit log or the state files were changed by hand or come from " +
        "another checkpoint. Restore them together, or run the query from a new checkpoint to change the format.")

  /**
   * A version of a store written in checkpoint format v2 asked for without its checkpoint id. A query
   * passes the id its commit log records; Spark 4.0's state reader passes none.
   */
  def checkpointIdMissing(dir: String, version: Long, spark: String): TtlStoreException =
    error("CHECKPOINT_ID_MISSING", "dir" -> dir, "version" -> version)(
      s"Version $version of the state in $dir was written in checkpoint format v2 (its files carry " +
        "checkpoint ids) and is asked for without an id, which does not say which of its lineages to " +
        "load. A query passes the id its commit log records, but Spark 4.0's state reader passes none, " +
        "so on Spark 4.0 the state of a format v2 checkpoint cannot be read (Spark's RocksDB provider " +
        s"cannot load it either; this is Spark $spark): read it on Spark 4.2 or later. Otherwise the " +
        "commit log was changed by hand or comes from another checkpoint: restore it with the state files.")

  def stateSourceOptionRefused(source: String, option: String, why: String): TtlStoreException =
    error("STATE_SOURCE_OPTION_REFUSED", "source" -> source, "option" -> option)(
      s"format(${quoted(source)}) does not take the option $option: $why. Read it with " +
        "format(\"statestore\"), Spark's own state reader, which works on ttlstore checkpoints too.")

  def notTtlstoreState(checkpoint: String, source: String): TtlStoreException =
    error("NOT_TTLSTORE_STATE", "checkpoint" -> checkpoint)(
      s"The state in $checkpoint was not written by ttlstore (the provider pinned in its offset " +
        s"log is another one), so format(${quoted(source)}) has no timestamps to show. Read it with " +
        "format(\"statestore\").")

  def notACheckpoint(path: String, missing: String): TtlStoreException =
    error("NOT_A_CHECKPOINT", "path" -> path)(
      s"$path is not a streaming query's checkpoint, or not all of one: there is no $missing. " +
        "Pass the directory given as the query's checkpointLocation.")

  def unknownCodec(name: String, key: String): TtlStoreException =
    error("UNKNOWN_CODEC", "codec" -> name)(
      s"'$name' is not a compression codec ttlstore can read or write. Set $key to one of lz4, " +
        "zstd, snappy, lzf (or the class name of one of Spark's codecs).")

  /** Members Spark uses only for transformWithState and stream-stream join state formats 3/4. */
  def unsupportedByClassicStores(what: String, providerKey: String): TtlStoreException = unsupportedOperation(what,
    "it is used only by transformWithState and stream-stream join state formats 3/4, which ttlstore does " +
      "not serve: run that query on Spark's own provider, by setting " +
      s"$providerKey=org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider " +
      "in the session before starting it (spark.conf.set); ttlstore's queries keep theirs " +
      "(docs/usage.md, \"One provider per query\").")

  def snapshotNotFound(dir: String, version: Long, available: Seq[Long]): TtlStoreException =
    error("SNAPSHOT_NOT_FOUND", "dir" -> dir, "version" -> version)(
      s"There is no snapshot of version $version in $dir to replay from (snapshots: " +
        s"${if (available.isEmpty) "none" else available.mkString(", ")}). Pick snapshotStartBatchId " +
        "so that snapshotStartBatchId + 1 is one of them.")

  def changelogMissing(file: String, version: Long): TtlStoreException =
    error("CHANGELOG_MISSING", "file" -> file, "version" -> version)(
      s"The changelog for version $version is missing: $file. The state cannot be rebuilt " +
        "without it; restore the file or restart the query from a new checkpoint.")

  def changelogTruncated(file: String, version: Long): TtlStoreException =
    error("CHANGELOG_TRUNCATED", "file" -> file, "version" -> version)(
      s"The changelog for version $version ends early: $file. It was cut short after it was " +
        "committed; restore the file from a backup.")

  def changelogCorrupted(file: String, version: Long, detail: String): TtlStoreException =
    error("CHANGELOG_CORRUPTED", "file" -> file, "version" -> version)(
      s"The changelog for version $version is corrupted ($detail): $file. " +
        "Restore the file from a backup.")

  def snapshotCorrupted(file: String, version: Long, detail: String): TtlStoreException =
    error("SNAPSHOT_CORRUPTED", "file" -> file, "version" -> version)(
      s"The snapshot of version $version is unreadable ($detail): $file. " +
        "Restore the file from a backup.")

  def snapshotRepairFailed(file: String, version: Long, snapshot: Long, tried: Seq[Long], maxReplay: Int,
      cause: Throwable): TtlStoreException =
    errorWithCause("SNAPSHOT_REPAIR_FAILED", cause, "file" -> file, "version" -> version)(
      s"The snapshot of version $snapshot failed to load (${cause.getMessage}), and version $version could not " +
        "be built from an older base instead: " +
        (if (tried.isEmpty) s"every older base needs more than $maxReplay changelogs " +
           "(spark.sql.streaming.stateStore.autoSnapshotRepair.maxChangeFileReplay). Raise that setting, or "
         else
           s"the bases ${tried.map(b => if (b == 0) "0 (empty)" else b.toString).mkString(", ")} failed to load too. ") +
        s"Restore $file from a backup.")

  def sstMissing(file: String, version: Long): TtlStoreException =
    error("SST_MISSING", "file" -> file, "version" -> version)(
      s"The snapshot of version $version needs $file, which does not exist. " +
        "Restore the file from a backup.")

  def sstCorrupted(file: String, version: Long, detail: String): TtlStoreException =
    error("SST_CORRUPTED", "file" -> file, "version" -> version)(
      s"The snapshot of version $version needs $file, which is damaged ($detail). " +
        "Restore the file from a backup.")

  def formatTooNew(file: String, found: Int, supported: Int): TtlStoreException =
    error("FORMAT_TOO_NEW", "file" -> file, "found" -> found, "supported" -> supported)(
      s"$file was written in ttlstore format $found; this ttlstore reads formats up to " +
        s"$supported. Upgrade ttlstore to read this checkpoint.")

  def rocksDbFailure(store: String, operation: String, cause: Throwable): TtlStoreException =
    errorWithCause("ROCKSDB_FAILURE", cause, "store" -> store, "operation" -> operation)(
      s"RocksDB failed to $operation for $store: ${cause.getMessage}")

  /** A commit that failed; a full local disk keeps its own name, which says what to do. */
  def commitFailed(store: String, version: Long, cause: Throwable): TtlStoreException =
    cause match {
      case e: TtlStoreException if e.errorName == DiskFull.ErrorName => e
      case _ =>
        errorWithCause("COMMIT_FAILED", cause, "store" -> store, "version" -> version)(
          s"Committing version $version of $store failed: ${cause.getMessage}")
    }

  /** A load that ran out of memory, as Spark's providers report it (the store's rows did not fit). */
  def notEnoughMemoryToLoad(store: String, version: Long, cause: OutOfMemoryError): TtlStoreException =
    errorWithCause("NOT_ENOUGH_MEMORY_TO_LOAD", cause, "store" -> store, "version" -> version)(
      s"Not enough memory to load version $version of $store. Give the executors more memory " +
        "(spark.executor.memory and spark.executor.memoryOverhead) or lower " +
        "spark.sql.streaming.stateStore.ttlstore.maxMemoryUsageMB.")
}
