#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stockctl {

/// How an output file (--report, --output, --metrics-file) is written, chosen by what its path
/// names when it is opened.
enum class OutputMode {
  replace,   ///< a regular file, or nothing yet: a temporary file beside it, renamed into place
  in_place,  ///< anything else that exists (a device, a FIFO, a socket): opened and written
  stdout_,   ///< `-`: standard output
  /// A descriptor this process already holds (/dev/stdout, /dev/stderr, /dev/fd/N,
  /// /proc/self/fd/N): written through it, as a shell redirection set it up (appending to a
  /// `>>` log, into a pipe), never reopened or replaced.
  descriptor,
};

/// What an output path resolves to: the name that is finally written (a symlink followed to its
/// last target, so that the link stays and its target is replaced), and how.
struct OutputTarget {
  std::string path;
  OutputMode mode = OutputMode::replace;
  int fd = -1;  ///< OutputMode::descriptor: the descriptor
};

/// Follows `path` through its symlinks and classifies what it names; a dangling symlink names
/// the file it points to, created like a new one. Throws IoError (naming `path`) on a symlink
/// loop or a directory.
OutputTarget resolve_output(const std::string& path);

/// Throws IoError (as AtomicFile would: "cannot write WHAT PATH: reason") when `path` can be
/// seen now not to be writable: a directory, a missing directory or one we may not write in for
/// a file that is replaced, or such a file we may not write. Opens nothing, so that a FIFO's
/// reader is not given an end of file; for an output written only when the run ends.
void check_output_writable(const std::string& path, const std::string& what);

/// Whether `path` names this process's standard output through a descriptor (/dev/stdout,
/// /dev/fd/1, /proc/self/fd/N of the same open file): writing a summary there too would put it
/// in the middle of the data, as with `-`.
bool names_standard_output(const std::string& path);

/// A file a command line names: the option that names it, and whether it is written.
struct NamedFile {
  std::string option;  ///< "--file", "--report", ...
  std::string path;
  bool output = false;
};

/// Why `files` cannot be used together, or "": two of them name one regular file (or one new
/// file) and at least one is an output. An output over its own source, or two outputs over
/// each other, would leave only the last writer's data (the source replaced by its report, the
/// report by the metrics). Devices, FIFOs, descriptors (/dev/stdout) and `-` never clash.
std::string clashing_files(const std::vector<NamedFile>& files);

/// An output file. A regular file (or a new one) is written to a temporary name beside it and
/// renamed into place by commit(), so that a reader never sees half of it: a run that fails (a
/// node down, a full disk) leaves the old file, or none, and no temporary file behind. Anything
/// else is written in place and never replaced: replacing /dev/null or a FIFO with a regular file
/// would break every other program that uses it.
class AtomicFile {
 public:
  /// Opens the file (its temporary file when it is replaced); `what` ("report ", "metrics file
  /// ", or "") names it in errors: "cannot write WHAT PATH: reason". Throws IoError.
  explicit AtomicFile(std::string path, std::string what = "");
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends `text`; throws IoError as soon as the system reports a failed write.
  void write(std::string_view text);
  /// Writes what is buffered; a replaced file is synced, renamed into place, and its directory
  /// synced. Throws IoError.
  void commit();
  const std::string& path() const { return path_; }
  OutputMode mode() const { return target_.mode; }

 private:
  void open_temp();
  void open_in_place();
  void flush_buffer();
  void sync_directory() const;
  [[noreturn]] void fail(int err);

  std::string path_;
  std::string what_;
  OutputTarget target_;
  std::string temp_;  ///< the temporary file, when the target is replaced
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace stockctl
