package io.ttlstore.errors

import io.ttlstore.errors.TtlStoreErrors.error

/**
 * The errors of reading what `ttlstore migrate` adopted: the files Spark's own providers wrote, and
 * ttlstore's record of the adoption. Built like all of [[TtlStoreErrors]].
 */
object AdoptionErrors {

  def legacyFileMissing(file: String, version: Long, wanted: Long): TtlStoreException =
    error("LEGACY_FILE_MISSING", "file" -> file, "version" -> version)(
      s"Version $wanted of the state written by Spark's provider needs $file, which is missing. " +
        "Restore it from a backup of the checkpoint; ttlstore never deletes the files of the " +
        "provider it adopted while a retained version needs them.")

  def legacyFileCorrupted(file: String, version: Long, why: String): TtlStoreException =
    error("LEGACY_FILE_CORRUPTED", "file" -> file, "version" -> version)(
      s"$file (version $version, written by Spark's provider) cannot be read: $why. Restore it " +
        "from a backup of the checkpoint, or check spark.sql.streaming.stateStore.compression.codec " +
        "matches the codec the query wrote it with.")

  def legacyFormatTooNew(file: String, version: Long, found: String, read: String): TtlStoreException =
    error("LEGACY_FORMAT_TOO_NEW", "file" -> file, "version" -> version, "found" -> found)(
      s"$file (version $version, written by Spark's provider) has metadata version $found; this ttlstore " +
        s"reads $read. Upgrade ttlstore to one that reads the files of the Spark that wrote it.")

  def legacyKeyMalformed(why: String): TtlStoreException =
    error("LEGACY_KEY_MALFORMED")(
      s"A key written by Spark's provider is not laid out as ttlstore reads it: $why.")

  def adoptionRecordCorrupted(file: String, why: String): TtlStoreException =
    error("ADOPTION_RECORD_CORRUPTED", "file" -> file)(
      s"$file, ttlstore's record of the Spark provider state this store adopted, cannot be read: " +
        s"$why. Restore it from a backup of the checkpoint.")

  def adoptionRecordMissing(file: String, version: Long, provider: String): TtlStoreException =
    error("ADOPTION_RECORD_MISSING", "file" -> file, "version" -> version)(
      s"$file is missing: this store's own files begin after version $version, and Spark's $provider " +
        s"provider's files beside them hold that version, so the store was built on them by " +
        "`ttlstore migrate`, and the record saying so is gone. Restore it from a backup of the " +
        "checkpoint, or write it again: {\"provider\":\"" + provider + "\",\"version\":" + version + ",\"codec\":" +
        "\"<spark.sql.streaming.stateStore.compression.codec of that query, lz4 by default>\"," +
        "\"adoptedAtMs\":<the migration's time in epoch ms>}.")
}
