package io.ttlstore.store.local

import java.io.File

import scala.util.control.NonFatal

import org.apache.commons.io.FileUtils
import org.apache.spark.internal.Logging

import io.ttlstore.checkpoint.{ChangelogReader, CheckpointFiles, SstDownloads, VersionFile}

/**
 * The changelogs a load replays, fetched into the store's work directory while its snapshot's SST
 * files come in, within the same bound per executor ([[SstDownloads]]): replay starts once the
 * snapshot is open, and reads local files instead of one request after another. A changelog that
 * did not come in whole is read from the checkpoint at replay, which fails by its name as before:
 * the prefetch only ever saves time, and each copy is checked as the original is when read.
 */
private[local] final class ChangelogPrefetch(files: CheckpointFiles, workDir: File, threads: Int) extends Logging {
  private val dir = new File(workDir, "changelogs")
  private var pending: Option[SstDownloads.Pending] = None
  private var copies = Seq.empty[(VersionFile, File)]

  /** Starts fetching the changelogs of `route`, when there is something to overlap them with. */
  def start(route: Route): Unit = {
    clear()
    if (route.snapshot.isDefined || route.changelogs.size > 1) {
      dir.mkdirs()
      // Oldest first: the order replay reads them in.
      copies = route.changelogs.zipWithIndex.map { case (f, i) => f -> new File(dir, s"$i.changelog") }
      pending = Some(SstDownloads.start(
          copies.map { case (f, to) => SstDownloads.Download(to, out => files.fetchChangelog(f, out)) }, threads))
    }
  }

  /** Opens `file` for replay: its fetched copy once every fetch has ended, if it came in whole. */
  def open(file: VersionFile): ChangelogReader = {
    pending.foreach { p =>
      try p.await()
      catch {
        case NonFatal(e) => logInfo(s"Fetching changelogs ahead failed; replay reads them from ${files.root}", e)
      }
      pending = None
    }
    files.openChangelog(file, copies.collectFirst { case (`file`, copy) if copy.isFile => copy })
  }

  /** Waits for the fetches under way and deletes their copies. */
  def clear(): Unit = {
    pending.foreach(p =>
      try p.await()
      catch { case NonFatal(_) => () })
    pending = None
    copies = Nil
    FileUtils.deleteQuietly(dir)
  }
}
