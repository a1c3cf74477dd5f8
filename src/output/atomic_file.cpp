#include "output/atomic_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"

namespace stockctl {

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temp_(fmt::format("{}.tmp.{}", path_, getpid())) {
  file_ = std::fopen(temp_.c_str(), "w");
  if (!file_) throw IoError(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
}

AtomicFile::~AtomicFile() {
  if (file_) {
    std::fclose(file_);
    std::remove(temp_.c_str());
  }
}

void AtomicFile::fail(int err) {
  std::fclose(file_);
  file_ = nullptr;
  std::remove(temp_.c_str());
  throw IoError(fmt::format("cannot write {}: {}", path_, std::strerror(err)));
}

void AtomicFile::write(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) fail(errno);
}

void AtomicFile::commit() {
  if (std::fflush(file_) != 0 || std::ferror(file_) || fsync(fileno(file_)) != 0) fail(errno);
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0 || std::rename(temp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    std::remove(temp_.c_str());
    throw IoError(fmt::format("cannot write {}: {}", path_, std::strerror(err)));
  }
}

}  // namespace stockctl
