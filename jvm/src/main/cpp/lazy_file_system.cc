// A RocksDB FileSystem that serves SST files which are not local yet by ranged reads: see lazy_file_system.h.
#include "lazy_file_system.h"

namespace ttlstore {

using ROCKSDB_NAMESPACE::FileSystem;
using ROCKSDB_NAMESPACE::FSRandomAccessFile;
using ROCKSDB_NAMESPACE::Slice;
using FileOptions = LazyFileSystem::FileOptions;
using IODebugContext = LazyFileSystem::IODebugContext;
using IOOptions = LazyFileSystem::IOOptions;
using IOStatus = LazyFileSystem::IOStatus;

namespace {

// A file opened while remote: its reads are ranged reads until the file is switched to local, then the local
// file's.
class RemoteFile : public FSRandomAccessFile {
 public:
  RemoteFile(std::shared_ptr<RemoteEntry> entry, std::shared_ptr<const RangedReads> reads,
             std::shared_ptr<FileSystem> local_fs, const FileOptions& options, std::shared_ptr<LazyCounts> counts)
      : entry_(std::move(entry)),
        reads_(std::move(reads)),
        local_fs_(std::move(local_fs)),
        options_(options),
        counts_(std::move(counts)) {}

  IOStatus Read(uint64_t offset, size_t n, const IOOptions& options, Slice* result, char* scratch,
                IODebugContext* dbg) const override {
    if (entry_->local.load(std::memory_order_acquire)) {
      FSRandomAccessFile* local = nullptr;
      IOStatus opened = OpenLocal(dbg, &local);
      if (!opened.ok()) return opened;
      counts_->switched_reads.fetch_add(1, std::memory_order_relaxed);
      return local->Read(offset, n, options, result, scratch, dbg);
    }
    size_t got = 0;
    if (offset < entry_->size && n > 0) {
      IOStatus read = reads_->Read(entry_->file, entry_->path, offset, n, scratch, &got);
      if (!read.ok()) return read;
      counts_->ranged_reads.fetch_add(1, std::memory_order_relaxed);
      counts_->ranged_bytes.fetch_add(static_cast<long>(got), std::memory_order_relaxed);
    }
    *result = Slice(scratch, got);
    return IOStatus::OK();
  }

  IOStatus InvalidateCache(size_t offset, size_t length) override {
    FSRandomAccessFile* local = nullptr;
    if (!entry_->local.load(std::memory_order_acquire) || !OpenLocal(nullptr, &local).ok()) return IOStatus::OK();
    return local->InvalidateCache(offset, length);
  }

 private:
  // The local file, opened by the first read after the switch; every later read finds it without a lock (a table
  // reader opened remotely reads through this object for the DB's life).
  IOStatus OpenLocal(IODebugContext* dbg, FSRandomAccessFile** local) const {
    *local = local_ready_.load(std::memory_order_acquire);
    if (*local != nullptr) return IOStatus::OK();
    std::lock_guard<std::mutex> lock(open_local_);
    if (local_ == nullptr) {
      IOStatus opened = local_fs_->NewRandomAccessFile(entry_->path, options_, &local_, dbg);
      if (!opened.ok()) return opened;
      local_ready_.store(local_.get(), std::memory_order_release);
    }
    *local = local_.get();
    return IOStatus::OK();
  }

  std::shared_ptr<RemoteEntry> entry_;
  std::shared_ptr<const RangedReads> reads_;
  std::shared_ptr<FileSystem> local_fs_;
  FileOptions options_;
  std::shared_ptr<LazyCounts> counts_;
  mutable std::mutex open_local_;
  mutable std::unique_ptr<FSRandomAccessFile> local_;
  mutable std::atomic<FSRandomAccessFile*> local_ready_{nullptr};
};

// "a//b/" and "a/b" name the same file.
std::string normal(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (!(c == '/' && !out.empty() && out.back() == '/')) out += c;
  }
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace

void LazyFileSystem::ServeRemotely(const std::string& path, uint64_t size, jlong file) {
  auto entry = std::make_shared<RemoteEntry>();
  entry->path = normal(path);
  entry->size = size;
  entry->file = file;
  std::lock_guard<std::mutex> lock(mutex_);
  remote_[entry->path] = entry;
}

bool LazyFileSystem::MarkLocal(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = remote_.find(normal(path));
  if (found == remote_.end()) return false;
  found->second->local = true;
  remote_.erase(found);
  return true;
}

long LazyFileSystem::RemoteFiles() {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<long>(remote_.size());
}

std::shared_ptr<RemoteEntry> LazyFileSystem::Remote(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = remote_.find(normal(name));
  return found == remote_.end() ? nullptr : found->second;
}

IOStatus LazyFileSystem::NewRandomAccessFile(const std::string& name, const FileOptions& options,
                                             std::unique_ptr<FSRandomAccessFile>* result, IODebugContext* dbg) {
  std::shared_ptr<RemoteEntry> entry = Remote(name);
  if (entry == nullptr) return target()->NewRandomAccessFile(name, options, result, dbg);
  counts_->remote_opens++;
  result->reset(new RemoteFile(entry, reads_, target_, options, counts_));
  return IOStatus::OK();
}

IOStatus LazyFileSystem::FileExists(const std::string& name, const IOOptions& options, IODebugContext* dbg) {
  return Remote(name) != nullptr ? IOStatus::OK() : target()->FileExists(name, options, dbg);
}

IOStatus LazyFileSystem::GetFileSize(const std::string& name, const IOOptions& options, uint64_t* size,
                                     IODebugContext* dbg) {
  std::shared_ptr<RemoteEntry> entry = Remote(name);
  if (entry == nullptr) return target()->GetFileSize(name, options, size, dbg);
  *size = entry->size;
  return IOStatus::OK();
}

IOStatus LazyFileSystem::GetChildren(const std::string& dir, const IOOptions& options,
                                     std::vector<std::string>* result, IODebugContext* dbg) {
  IOStatus status = target()->GetChildren(dir, options, result, dbg);
  if (!status.ok()) return status;
  std::string prefix = normal(dir) + "/";
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& registered : remote_) {
    const std::string& path = registered.first;
    if (path.compare(0, prefix.size(), prefix) != 0 || path.find('/', prefix.size()) != std::string::npos) continue;
    std::string child = path.substr(prefix.size());
    bool listed = false;
    for (const std::string& name : *result) listed = listed || name == child;
    if (!listed) result->push_back(child);
  }
  return IOStatus::OK();
}

IOStatus LazyFileSystem::DeleteFile(const std::string& name, const IOOptions& options, IODebugContext* dbg) {
  bool was_remote;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    was_remote = remote_.erase(normal(name)) > 0;
  }
  // A local copy a hydration has just put in its place goes too.
  IOStatus status = target()->DeleteFile(name, options, dbg);
  return was_remote && status.IsNotFound() ? IOStatus::OK() : status;
}

}  // namespace ttlstore
