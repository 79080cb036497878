package io.ttlstore

import io.ttlstore.migrate.CheckpointMigration
import io.ttlstore.tools.ToolLines.emit
import io.ttlstore.tools.ToolMain

/**
 * `ttlstore migrate` in a plain JVM: `java -cp <pyspark's jars>:<ttlstore jar> io.ttlstore.MigrateMain
 * CHECKPOINT [--dry-run] [--rollback] [--force] [--conf KEY=VALUE]...`. CHECKPOINT is any URI Hadoop
 * reads, with the Hadoop settings `--conf` gives. It prints one JSON line, `{"report": {...}}`
 * ([[io.ttlstore.migrate.MigrationReport]]) or `{"error": "[NAME] ..."}` (exit code 2).
 */
object MigrateMain {
  private val Usage = "usage: MigrateMain CHECKPOINT [--dry-run] [--rollback] [--force] [--conf KEY=VALUE]..."

  def main(args: Array[String]): Unit =
    ToolMain.run(Usage, Set("--dry-run", "--rollback", "--force"), Set.empty, "migrating", args) { a =>
      emit(Map("report" -> CheckpointMigration.run(a.checkpoint, a.flag("--dry-run"), a.flag("--rollback"),
          a.flag("--force"), a.hadoopConf)))
    }
}
