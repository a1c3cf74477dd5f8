#include "sources/line_input.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"
#include "base/interrupt.h"

namespace stockctl {

namespace {

constexpr std::size_t kReadSize = std::size_t{64} * 1024;

}  // namespace

LineInput::LineInput(const std::string& path)
    : fd_(path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC)),
      owned_(path != "-"),
      name_(path == "-" ? "standard input" : path) {
  if (fd_ < 0) throw IoError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
}

LineInput::~LineInput() {
  if (owned_) ::close(fd_);
}

bool LineInput::next(std::string& line) {
  for (;;) {
    const std::size_t newline = buf_.find('\n', pos_);
    if (newline != std::string::npos || (end_ && pos_ < buf_.size())) {
      const std::size_t stop = newline == std::string::npos ? buf_.size() : newline;
      line.assign(buf_, pos_, stop - pos_);
      pos_ = newline == std::string::npos ? buf_.size() : newline + 1;
      // A UTF-8 byte order mark (a Windows editor's) before the first line is no part of the
      // first SKU, as in every other source format: invisible in the answer, it would make an
      // existing item look missing.
      if (first_line_ && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
      first_line_ = false;
      return true;
    }
    if (end_) return false;
    // Keep only the part of a line not yet returned before reading more.
    buf_.erase(0, pos_);
    pos_ = 0;
    const std::size_t had = buf_.size();
    buf_.resize(had + kReadSize);
    const ssize_t n = ::read(fd_, buf_.data() + had, kReadSize);
    buf_.resize(had + static_cast<std::size_t>(n > 0 ? n : 0));
    if (n == 0) end_ = true;
    if (n < 0) {
      if (errno != EINTR) {
        throw IoError(fmt::format("cannot read {}: {}", name_, std::strerror(errno)));
      }
      if (interrupted()) return false;
    }
  }
}

bool LineInput::would_wait() const {
  if (end_ || buf_.find('\n', pos_) != std::string::npos) return false;
  pollfd ready{fd_, POLLIN, 0};
  return ::poll(&ready, 1, 0) == 0;
}

}  // namespace stockctl
