// A RocksDB FileSystem that serves SST files which are not local yet by ranged reads: see lazy_file_system.h.
#include "lazy_file_system.h"

#include <cstdio>

namespace ttlstore {

using ROCKSDB_NAMESPACE::FileSystem;
using ROCKSDB_NAMESPACE::FSRandomAccessFile;
using ROCKSDB_NAMESPACE::Slice;
using FileOptions = LazyFileSystem::FileOptions;
using IODebugContext = LazyFileSystem::IODebugContext;
using IOOptions = LazyFileSystem::IOOptions;
using IOStatus = LazyFileSystem::IOStatus;

namespace {

// The tick remote mode orders reads by (least recently read local files are demoted first).
std::atomic<long> read_ticks{0};

// A file opened while remote (or, in remote mode, any SST file): its reads are ranged reads while the file is remote,
// and the local file's while it is local.
class RemoteFile : public FSRandomAccessFile {
 public:
  RemoteFile(std::shared_ptr<RemoteEntry> entry, std::shared_ptr<const RangedReads> reads,
             std::shared_ptr<FileSystem> local_fs, const FileOptions& options, std::shared_ptr<LazyCounts> counts,
             bool demotable)
      : entry_(std::move(entry)),
        reads_(std::move(reads)),
        local_fs_(std::move(local_fs)),
        options_(options),
        counts_(std::move(counts)),
        demotable_(demotable) {}

  IOStatus Read(uint64_t offset, size_t n, const IOOptions& options, Slice* result, char* scratch,
                IODebugContext* dbg) const override {
    if (demotable_) {
      entry_->last_read.store(read_ticks.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      std::shared_ptr<FSRandomAccessFile> local;
      IOStatus opened = SharedLocal(dbg, &local);
      if (!opened.ok()) return opened;
      if (local != nullptr) {
        counts_->switched_reads.fetch_add(1, std::memory_order_relaxed);
        return local->Read(offset, n, options, result, scratch, dbg);
      }
    } else if (entry_->local.load(std::memory_order_acquire)) {
      FSRandomAccessFile* local = nullptr;
      IOStatus opened = OpenLocal(dbg, &local);
      if (!opened.ok()) return opened;
      counts_->switched_reads.fetch_add(1, std::memory_order_relaxed);
      return local->Read(offset, n, options, result, scratch, dbg);
    }
    size_t got = 0;
    uint64_t size = entry_->size.load(std::memory_order_acquire);
    if (offset < size && n > 0) {
      IOStatus read = reads_->Read(entry_->file.load(std::memory_order_acquire), entry_->path, offset, n, scratch,
                                   &got);
      if (!read.ok()) return read;
      counts_->ranged_reads.fetch_add(1, std::memory_order_relaxed);
      counts_->ranged_bytes.fetch_add(static_cast<long>(got), std::memory_order_relaxed);
    }
    *result = Slice(scratch, got);
    return IOStatus::OK();
  }

  IOStatus InvalidateCache(size_t offset, size_t length) override {
    if (demotable_) {
      std::shared_ptr<FSRandomAccessFile> local = std::atomic_load(&entry_->shared_local);
      return local == nullptr ? IOStatus::OK() : local->InvalidateCache(offset, length);
    }
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

  // Remote mode: the local file all readers share while the file is local (opened by the first read that needs it),
  // or null once it is remote. A demotion clears the entry's handle before Java deletes the file: a read that still
  // opens it, or finds it gone, looks at the entry again, and a handle it shared after the demotion is dropped.
  IOStatus SharedLocal(IODebugContext* dbg, std::shared_ptr<FSRandomAccessFile>* local) const {
    if (!entry_->local.load(std::memory_order_acquire)) return IOStatus::OK();
    *local = std::atomic_load(&entry_->shared_local);
    if (*local != nullptr) return IOStatus::OK();
    std::unique_ptr<FSRandomAccessFile> opened;
    IOStatus status = local_fs_->NewRandomAccessFile(entry_->path, options_, &opened, dbg);
    if (!status.ok()) return entry_->local.load(std::memory_order_acquire) ? status : IOStatus::OK();
    std::shared_ptr<FSRandomAccessFile> mine(opened.release());
    std::shared_ptr<FSRandomAccessFile> expected;
    *local = std::atomic_compare_exchange_strong(&entry_->shared_local, &expected, mine) ? mine : expected;
    if (!entry_->local.load(std::memory_order_acquire)) std::atomic_store(&entry_->shared_local, {});
    return IOStatus::OK();
  }

  std::shared_ptr<RemoteEntry> entry_;
  std::shared_ptr<const RangedReads> reads_;
  std::shared_ptr<FileSystem> local_fs_;
  FileOptions options_;
  std::shared_ptr<LazyCounts> counts_;
  const bool demotable_;
  mutable std::mutex open_local_;
  mutable std::unique_ptr<FSRandomAccessFile> local_;
  mutable std::atomic<FSRandomAccessFile*> local_ready_{nullptr};
};

bool is_sst(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".sst") == 0;
}

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
  if (!remote_mode_) remote_.erase(found);
  return true;
}

bool LazyFileSystem::Demote(const std::string& path, uint64_t size, jlong file) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = remote_.find(normal(path));
  if (!remote_mode_ || found == remote_.end()) return false;
  RemoteEntry& entry = *found->second;
  entry.size.store(size, std::memory_order_relaxed);
  entry.file.store(file, std::memory_order_relaxed);
  entry.local.store(false, std::memory_order_release);
  std::atomic_store(&entry.shared_local, {});
  return true;
}

long LazyFileSystem::LastRead(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = remote_.find(normal(path));
  if (found == remote_.end()) return -1;
  return found->second->last_read.load(std::memory_order_relaxed);
}

long LazyFileSystem::RemoteFiles() {
  std::lock_guard<std::mutex> lock(mutex_);
  long remote = 0;
  for (const auto& entry : remote_) remote += entry.second->local.load() ? 0 : 1;
  return remote;
}

std::shared_ptr<RemoteEntry> LazyFileSystem::Remote(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = remote_.find(normal(name));
  return found == remote_.end() || found->second->local.load(std::memory_order_acquire) ? nullptr : found->second;
}

IOStatus LazyFileSystem::NewRandomAccessFile(const std::string& name, const FileOptions& options,
                                             std::unique_ptr<FSRandomAccessFile>* result, IODebugContext* dbg) {
  std::string path = normal(name);
  std::shared_ptr<RemoteEntry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = remote_.find(path);
    if (found != remote_.end()) entry = found->second;
  }
  if (entry == nullptr && remote_mode_ && is_sst(path)) {
    // A file RocksDB wrote (a flush, a compaction): tracked from its first open, which it serves, so that it can be
    // demoted once its copy is in the checkpoint.
    std::unique_ptr<FSRandomAccessFile> opened;
    IOStatus status = target()->NewRandomAccessFile(name, options, &opened, dbg);
    if (!status.ok()) return status;
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = remote_.find(path);
    if (found != remote_.end()) {
      entry = found->second;
    } else {
      entry = std::make_shared<RemoteEntry>();
      entry->path = path;
      entry->local = true;
      entry->shared_local = std::shared_ptr<FSRandomAccessFile>(opened.release());
      remote_[path] = entry;
    }
  }
  if (entry == nullptr || (!remote_mode_ && entry->local.load())) {
    return target()->NewRandomAccessFile(name, options, result, dbg);
  }
  if (!entry->local.load()) counts_->remote_opens++;
  result->reset(new RemoteFile(entry, reads_, target_, options, counts_, remote_mode_));
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
    if (registered.second->local.load()) continue;
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
  bool was_remote = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = remote_.find(normal(name));
    if (found != remote_.end()) {
      was_remote = !found->second->local.load();
      remote_.erase(found);
    }
  }
  // A local copy a hydration has just put in its place goes too.
  IOStatus status = target()->DeleteFile(name, options, dbg);
  return was_remote && status.IsNotFound() ? IOStatus::OK() : status;
}

IOStatus LazyFileSystem::LinkFile(const std::string& src, const std::string& target, const IOOptions& options,
                                  IODebugContext* dbg) {
  if (Remote(src) == nullptr) {
    IOStatus linked = FileSystemWrapper::LinkFile(src, target, options, dbg);
    // A file demoted (and deleted) between the look and the link is remote now.
    if (linked.ok() || Remote(src) == nullptr) return linked;
  }
  // A remote file has no local copy to link: the checkpoint gets a marker, which its upload knows as the
  // checkpoint's own file (written with stdio: FileOptions' layout differs between RocksDB versions).
  std::FILE* marker = std::fopen(target.c_str(), "wx");
  if (marker == nullptr) return IOStatus::IOError("cannot create the marker of remote file " + src + " at " + target);
  bool written = std::fputs(kRemoteMarker, marker) >= 0;
  bool closed = std::fclose(marker) == 0;
  return written && closed ? IOStatus::OK() : IOStatus::IOError("cannot write the marker of remote file " + src);
}

}  // namespace ttlstore
