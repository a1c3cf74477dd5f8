#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace stockctl {

/// A file written to a temporary name beside its path and renamed into place by commit(), so
/// that a reader never sees half of it: a run that fails (a node down, a full disk) leaves the
/// old file, or none, and no temporary file behind.
class AtomicFile {
 public:
  /// Opens the temporary file; throws IoError.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends `text`; throws IoError as soon as the system reports a failed write.
  void write(std::string_view text);
  /// Flushes, syncs and renames into place; throws IoError.
  void commit();
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(int err);

  std::string path_;
  std::string temp_;
  std::FILE* file_ = nullptr;
};

}  // namespace stockctl
