// A RocksDB FileSystem that serves SST files which are not local yet by ranged reads through Java (issue 51: open
// first, fetch lazily).
//
// LazyFileSystem forwards every call to RocksDB's default file system, except for the files Java registered as
// remote: those exist, have their size and are listed in their directory as if local, and a random-access file on
// one reads each range through RangedReads (ranged_reads.h), whose Java side reads the checkpoint's copy. When Java
// has brought a file down whole and checked it, MarkLocal switches it: new opens, and every reader already open (a
// table reader stays open for the DB's life with max_open_files = -1), read the local file from then on. RocksDB
// verifies each block's checksum on every read, remote or local. A remote file RocksDB deletes (a compaction's
// input) only leaves the registry: the checkpoint's copy is not RocksDB's to delete.
//
// Built as jvm/src/test/cpp/prove_file_system.py builds it: against the headers jvm/spark/rocksdb-headers.tsv names
// for a line's rocksdbjni, on the old C++ ABI and without RTTI, its RocksDB symbols bound to the librocksdbjni already
// in the JVM. Nothing here reads the fields of IOOptions or FileOptions, whose layouts differ between versions.
#ifndef TTLSTORE_LAZY_FILE_SYSTEM_H
#define TTLSTORE_LAZY_FILE_SYSTEM_H

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <rocksdb/file_system.h>

#include "ranged_reads.h"

namespace ttlstore {

// A file registered as remote; shared by the registry and every reader opened on it.
struct RemoteEntry {
  std::string path;
  uint64_t size = 0;
  jlong file = 0;  // Java's identifier for the remote copy
  std::atomic<bool> local{false};
};

struct LazyCounts {
  std::atomic<long> remote_opens{0}, ranged_reads{0}, ranged_bytes{0}, switched_reads{0};
};

class LazyFileSystem : public ROCKSDB_NAMESPACE::FileSystemWrapper {
 public:
  using FileOptions = ROCKSDB_NAMESPACE::FileOptions;
  using IODebugContext = ROCKSDB_NAMESPACE::IODebugContext;
  using IOOptions = ROCKSDB_NAMESPACE::IOOptions;
  using IOStatus = ROCKSDB_NAMESPACE::IOStatus;

  LazyFileSystem(const std::shared_ptr<ROCKSDB_NAMESPACE::FileSystem>& target,
                 std::shared_ptr<const RangedReads> reads)
      : FileSystemWrapper(target), reads_(std::move(reads)) {}

  const char* Name() const override { return "TtlstoreLazyFileSystem"; }

  // From now on the file at `path` exists with `size` bytes, read through Java's remote copy `file`.
  void ServeRemotely(const std::string& path, uint64_t size, jlong file);
  // The file at `path` is local now; false when RocksDB deleted it meanwhile (the local copy is then an orphan).
  bool MarkLocal(const std::string& path);
  long RemoteFiles();
  const LazyCounts& counts() const { return *counts_; }

  IOStatus NewRandomAccessFile(const std::string& name, const FileOptions& options,
                               std::unique_ptr<ROCKSDB_NAMESPACE::FSRandomAccessFile>* result,
                               IODebugContext* dbg) override;
  IOStatus FileExists(const std::string& name, const IOOptions& options, IODebugContext* dbg) override;
  IOStatus GetFileSize(const std::string& name, const IOOptions& options, uint64_t* size,
                       IODebugContext* dbg) override;
  IOStatus GetChildren(const std::string& dir, const IOOptions& options, std::vector<std::string>* result,
                       IODebugContext* dbg) override;
  IOStatus DeleteFile(const std::string& name, const IOOptions& options, IODebugContext* dbg) override;

 private:
  std::shared_ptr<RemoteEntry> Remote(const std::string& name);

  std::shared_ptr<const RangedReads> reads_;
  std::shared_ptr<LazyCounts> counts_ = std::make_shared<LazyCounts>();
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<RemoteEntry>> remote_;
};

}  // namespace ttlstore

#endif
