#pragma once

#include <cstddef>
#include <string>

namespace stockctl {

/// Reads a file or standard input one line at a time with read(2), and can tell when the next
/// line has not arrived yet: `get -` then answers the lines it has before it waits for more, so
/// that a program asking one SKU at a time through a pipe gets each answer at once.
class LineInput {
 public:
  /// Reads standard input for "-", else opens `path`. Throws IoError.
  explicit LineInput(const std::string& path);
  ~LineInput();
  LineInput(const LineInput&) = delete;
  LineInput& operator=(const LineInput&) = delete;

  /// The next line, without its '\n' (the last one may have none); false at the end of the
  /// input, or when a signal interrupted the wait for it. Throws IoError.
  bool next(std::string& line);
  /// True when no whole line is buffered and the input has nothing to read now: a pipe or
  /// terminal whose writer has not written the next line yet. Never for a regular file.
  bool would_wait() const;

 private:
  int fd_;
  bool owned_;
  std::string name_;
  std::string buf_;
  std::size_t pos_ = 0;  ///< where the next line starts in buf_
  bool end_ = false;
  bool first_line_ = true;  ///< the next line is the first: a byte order mark is dropped
};

}  // namespace stockctl
