package io.ttlstore.checkpoint

/** One SST file of a snapshot: its name in the local DB and in the checkpoint, size and CRC32C. */
final case class SstFile(localName: String, dfsName: String, sizeBytes: Long, crc32c: Long)

/**
 * What a snapshot holds; stored as `manifest.json` inside `<v>.snapshot`. `ttl` is the version's
 * [[TtlRecord]] (absent in format 1).
 */
final case class SnapshotManifest(
    formatVersion: Int,
    version: Long,
    numRows: Long,
    sstFiles: Seq[SstFile],
    createdAtMs: Long,
    ttl: Option[TtlRecord] = None)
