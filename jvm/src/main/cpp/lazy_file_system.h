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
// In remote mode (state larger than the local disk) every SST file RocksDB opens is tracked, local or remote, and a
// local file whose copy is in the checkpoint can be switched back to remote (Demote): every reader then reads it by
// ranged reads from its next read, the readers share one local handle that the demotion drops (a read under way
// keeps it until it returns), and Java deletes the local file. A checkpoint RocksDB takes links a remote file as a
// marker file (kRemoteMarker), which the snapshot's upload knows as a file the checkpoint has.
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

// What a local checkpoint holds in place of a file that is remote (LinkFile).
constexpr const char* kRemoteMarker = "ttlstore: this SST file is in the checkpoint, not on local disk\n";

// A file registered as remote (or, in remote mode, any SST file RocksDB opened); shared by the registry and every
// reader opened on it.
struct RemoteEntry {
  std::string path;
  std::atomic<uint64_t> size{0};
  std::atomic<jlong> file{0};  // Java's identifier for the remote copy
  std::atomic<bool> local{false};
  // Remote mode: the tick of the last read (least recently read files are demoted first), and the local file every
  // reader shares (std::atomic_load/store; null until a read opens it, and again once demoted).
  std::atomic<long> last_read{0};
  std::shared_ptr<ROCKSDB_NAMESPACE::FSRandomAccessFile> shared_local;
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
                 std::shared_ptr<const RangedReads> reads, bool remote_mode = false)
      : FileSystemWrapper(target), reads_(std::move(reads)), remote_mode_(remote_mode) {}

  const char* Name() const override { return "TtlstoreLazyFileSystem"; }

  // From now on the file at `path` exists with `size` bytes, read through Java's remote copy `file`.
  void ServeRemotely(const std::string& path, uint64_t size, jlong file);
  // The file at `path` is local now; false when RocksDB deleted it meanwhile (the local copy is then an orphan).
  bool MarkLocal(const std::string& path);
  // Remote mode: the local file at `path`, whose copy Java's `file` of `size` bytes is in the checkpoint, is read
  // remotely from now on; false when RocksDB has no such file open (deleted meanwhile). Java then deletes it.
  bool Demote(const std::string& path, uint64_t size, jlong file);
  // Remote mode: the tick of the last read of the file at `path`, local or remote (0: never read); -1 when RocksDB has
  // no such file (never opened, or deleted).
  long LastRead(const std::string& path);
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
  IOStatus LinkFile(const std::string& src, const std::string& target, const IOOptions& options,
                    IODebugContext* dbg) override;

 private:
  // The registered entry of `name` if it is remote now, else null.
  std::shared_ptr<RemoteEntry> Remote(const std::string& name);

  std::shared_ptr<const RangedReads> reads_;
  const bool remote_mode_;
  std::shared_ptr<LazyCounts> counts_ = std::make_shared<LazyCounts>();
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<RemoteEntry>> remote_;
};

}  // namespace ttlstore

#endif
