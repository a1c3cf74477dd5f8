#include "output/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/text.h"

namespace stockctl {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{64} * 1024;
constexpr int kMaxLinks = 40;  // as the kernel's own limit on one path's symlinks

// The directory `path` is in ("." for a bare name), with its trailing slash.
std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash + 1);
}

std::string cannot_write(const std::string& what, const std::string& path, int err) {
  if (err == ENOTSUP) return fmt::format("cannot write {}{}: a block device (a disk)", what, path);
  return fmt::format("cannot write {}{}: {}", what, path, std::strerror(err));
}

// The target of the symlink `link`, resolved against the link's own directory when relative.
std::string link_target(const std::string& link, int& err) {
  std::string target(4096, '\0');
  ssize_t n = readlink(link.c_str(), target.data(), target.size());
  if (n < 0) {
    err = errno;
    return "";
  }
  target.resize(static_cast<std::size_t>(n));
  std::size_t slash = link.rfind('/');
  if (target.empty() || target[0] == '/' || slash == std::string::npos) return target;
  return link.substr(0, slash + 1) + target;
}

// Writes all of `data`; returns 0 or the errno. A reader that went away (a FIFO, a pipe) is an
// error reported like any other, not a SIGPIPE that kills the run before it says what it did.
int write_all(int fd, const char* data, std::size_t size) {
  sigset_t pipe;
  sigset_t old;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, &old);
  int err = 0;
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  if (err == EPIPE) {
    // Take the pending SIGPIPE, so that restoring the mask does not deliver it.
    const timespec zero{0, 0};
    sigtimedwait(&pipe, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return err;
}

// A socket cannot be open()ed: connect to it, as a stream or else a datagram socket.
int connect_unix_socket(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int err = 0;
  for (int type : {SOCK_STREAM, SOCK_DGRAM}) {
    int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) return fd;
    err = errno;
    close(fd);
    if (err != EPROTOTYPE) break;
  }
  errno = err;
  return -1;
}

// The descriptor of this process that `path` names (/dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N, /proc/<our pid>/fd/N), or -1. Such a path is a symlink whose target is what
// the descriptor has open (a file a shell opened for `>>`, "pipe:[N]"): followed, the file
// would be replaced by a new one, or a pipe not found at all.
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string& dir :
       {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
        std::string("/proc/thread-self/fd/"), fmt::format("/proc/{}/fd/", getpid())}) {
    if (path.compare(0, dir.size(), dir) != 0 || path.size() == dir.size()) continue;
    const std::string digits = path.substr(dir.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
      return -1;
    }
    return std::atoi(digits.c_str());
  }
  return -1;
}

// Follows `path` to what is finally written, into `out`; returns 0 or the errno that makes it
// impossible (a directory, a symlink loop, an unreadable link).
int resolve(const std::string& path, OutputTarget& out) {
  if (path == "-") {
    out = {path, OutputMode::stdout_};
    return 0;
  }
  std::string current = path;
  for (int links = 0; links <= kMaxLinks; ++links) {
    if (const int fd = own_descriptor(current); fd >= 0) {
      if (fcntl(fd, F_GETFD) < 0) return EBADF;  // not open in this process
      out = {current, OutputMode::descriptor, fd};
      return 0;
    }
    struct stat st {};
    // Whatever cannot be looked at (a missing directory, no permission) is created like a new
    // file, whose open then gives the reason.
    if (lstat(current.c_str(), &st) != 0 || S_ISREG(st.st_mode)) {
      out = {current, OutputMode::replace};
      return 0;
    }
    if (S_ISDIR(st.st_mode)) return EISDIR;
    // A disk is never an output: as root, a mistyped --report would write over it.
    if (S_ISBLK(st.st_mode)) return ENOTSUP;
    if (!S_ISLNK(st.st_mode)) {
      out = {current, OutputMode::in_place};
      return 0;
    }
    int err = 0;
    std::string next = link_target(current, err);
    if (err != 0) return err;
    current = next;
  }
  return ELOOP;
}

// A file we may not write is not replaced either, though renaming over it would work: a
// read-only file (yesterday's good export, kept) stays as `>` leaves it. (Root may write any
// file, as with `>`.) Throws IoError naming `path`.
void refuse_read_only(const std::string& target, const std::string& what, const std::string& path) {
  if (access(target.c_str(), F_OK) == 0 && access(target.c_str(), W_OK) != 0) {
    throw IoError(cannot_write(what, path, errno));
  }
}

}  // namespace

OutputTarget resolve_output(const std::string& path) {
  OutputTarget target;
  if (int err = resolve(path, target); err != 0) throw IoError(cannot_write("", path, err));
  return target;
}

namespace {

// A descriptor the shell opened for reading only (`7<file`) cannot take the output: said when
// the run starts, not after its work.
void refuse_read_only_descriptor(int fd, const std::string& what, const std::string& path) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0) throw IoError(cannot_write(what, path, errno));
  if ((flags & O_ACCMODE) == O_RDONLY) {
    throw IoError(
        fmt::format("cannot write {}{}: the descriptor is open for reading only", what, path));
  }
}

}  // namespace

void check_output_writable(const std::string& path, const std::string& what) {
  OutputTarget target;
  if (int err = resolve(path, target); err != 0) throw IoError(cannot_write(what, path, err));
  if (target.mode == OutputMode::descriptor) refuse_read_only_descriptor(target.fd, what, path);
  if (target.mode != OutputMode::replace) return;
  refuse_read_only(target.path, what, path);
  if (access(directory_of(target.path).c_str(), W_OK | X_OK) != 0)
    throw IoError(cannot_write(what, path, errno));
}

AtomicFile::AtomicFile(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)) {
  if (int err = resolve(path_, target_); err != 0) throw IoError(cannot_write(what_, path_, err));
  buffer_.reserve(kBufferBytes);
  switch (target_.mode) {
    case OutputMode::replace:
      open_temp();
      break;
    case OutputMode::in_place:
      open_in_place();
      break;
    case OutputMode::stdout_:
      fd_ = STDOUT_FILENO;
      break;
    case OutputMode::descriptor:
      refuse_read_only_descriptor(target_.fd, what_, path_);
      // A copy of our own: closing it leaves the descriptor the shell set up as it was.
      fd_ = fcntl(target_.fd, F_DUPFD_CLOEXEC, 3);
      if (fd_ < 0) throw IoError(cannot_write(what_, path_, errno));
      break;
  }
}

namespace {

// What a named file is, for telling two names of one file apart: its inode when it exists,
// else (a new output) its absolute path, or nothing for what never clashes.
struct FileIdentity {
  bool clashes = false;
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string path;
};

FileIdentity identity_of(const NamedFile& file) {
  FileIdentity id;
  if (file.path.empty() || file.path == "-") return id;
  std::string path = file.path;
  if (file.output) {
    try {
      const OutputTarget target = resolve_output(file.path);
      if (target.mode != OutputMode::replace) return id;
      path = target.path;
    } catch (const IoError&) {
      return id;  // opening it says why
    }
  }
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return id;
    id.clashes = id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  if (!file.output) return id;  // an input that is not there: reading it says so
  // A new file: its directory's real path and its name.
  const std::string dir = directory_of(path);
  char* real = realpath(dir.c_str(), nullptr);
  if (real == nullptr) return id;
  id.path = std::string(real) + "/" + path.substr(dir == "." ? 0 : dir.size());
  std::free(real);  // NOLINT(cppcoreguidelines-no-malloc): realpath's own allocation
  id.clashes = true;
  return id;
}

// A path in a message: whole (a path shortened is no use), its control characters escaped.
std::string quoted_path(const std::string& path) { return "'" + escape_control(path) + "'"; }

bool same_file(const FileIdentity& a, const FileIdentity& b) {
  if (!a.clashes || !b.clashes || a.exists != b.exists) return false;
  return a.exists ? a.dev == b.dev && a.ino == b.ino : a.path == b.path;
}

}  // namespace

bool names_standard_output(const std::string& path) {
  if (path == "-") return true;
  OutputTarget target;
  if (resolve(path, target) != 0 || target.mode != OutputMode::descriptor) return false;
  if (target.fd == STDOUT_FILENO) return true;
  struct stat named {};
  struct stat out {};
  return fstat(target.fd, &named) == 0 && fstat(STDOUT_FILENO, &out) == 0 &&
         named.st_dev == out.st_dev && named.st_ino == out.st_ino;
}

std::string clashing_files(const std::vector<NamedFile>& files) {
  std::vector<FileIdentity> ids;
  ids.reserve(files.size());
  for (const NamedFile& file : files) ids.push_back(identity_of(file));
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::size_t j = i + 1; j < files.size(); ++j) {
      if (!(files[i].output || files[j].output) || !same_file(ids[i], ids[j])) continue;
      const NamedFile& writer = files[j].output ? files[j] : files[i];
      const NamedFile& lost = files[j].output ? files[i] : files[j];
      return fmt::format(
          "{} {} and {} {} name the same file: the {} would replace the {}; give them different "
          "files",
          files[i].option, quoted_path(files[i].path), files[j].option, quoted_path(files[j].path),
          writer.option, lost.option);
    }
  }
  return "";
}

// The temporary files of earlier runs that died before they could remove theirs (SIGKILL, a
// power cut): "<target>.tmp.<pid>.<6 characters>" whose process is not running here. They are
// named, never removed: on a shared file system the process may be another machine's.
namespace {
std::vector<std::string> abandoned_temp_files(const std::string& target) {
  std::vector<std::string> found;
  const std::string dir = directory_of(target);
  const std::string base = target.substr(target.rfind('/') + 1);
  const std::string prefix = base + ".tmp.";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return found;
  while (const dirent* entry = readdir(d)) {
    const std::string_view name = entry->d_name;
    if (name.size() <= prefix.size() + 7 || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string_view rest = name.substr(prefix.size());  // "<pid>.XXXXXX"
    const std::size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string_view::npos || rest.size() - dot - 1 != 6) continue;
    const std::string_view digits = rest.substr(0, dot);
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(std::string(digits)));
    if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;
    found.push_back((dir == "." && target.find('/') == std::string::npos ? "" : dir) +
                    std::string(name));
  }
  closedir(d);
  std::sort(found.begin(), found.end());
  return found;
}
}  // namespace

void AtomicFile::open_temp() {
  refuse_read_only(target_.path, what_, path_);
  for (const std::string& left : abandoned_temp_files(target_.path)) {
    print_warning(
        fmt::format("{} was left by an earlier run that was killed before it finished "
                    "(its process is not running); remove it once you have checked",
                    quoted_path(left)));
  }
  // A name of our own, created exclusively: in a shared directory, a file someone else put
  // under a predictable name is never adopted and renamed into place.
  std::string name = fmt::format("{}.tmp.{}.XXXXXX", target_.path, getpid());
  fd_ = mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) throw IoError(cannot_write(what_, path_, errno));
  temp_ = std::move(name);
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd_, 0666 & ~mask);  // mkostemp makes it 0600; a new file gets what open(0666) gives
  // The file that replaces another keeps its permissions and, where we may, its owner: a report
  // readable by a monitoring user stays readable.
  struct stat st {};
  if (stat(target_.path.c_str(), &st) == 0) {
    fchmod(fd_, st.st_mode & 07777);
    if (fchown(fd_, st.st_uid, st.st_gid) != 0) {
      // Only root may give a file away; a file of our own is already ours.
    }
  }
}

void AtomicFile::open_in_place() {
  struct stat st {};
  const bool socket = stat(target_.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
  const bool fifo = !socket && S_ISFIFO(st.st_mode);
  // A FIFO is opened without blocking, so that one nobody reads is an error now rather than a
  // run that hangs in open() for ever; once open, it is written to as usual.
  fd_ = socket ? connect_unix_socket(target_.path)
               : ::open(target_.path.c_str(),
                        O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
  if (fd_ < 0 && fifo && errno == ENXIO) {
    throw IoError(fmt::format("cannot write {}{}: no process reads the FIFO", what_, path_));
  }
  if (fd_ < 0) throw IoError(cannot_write(what_, path_, errno));
  if (fifo) fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

AtomicFile::~AtomicFile() {
  if (target_.mode == OutputMode::stdout_ || fd_ < 0) return;
  close(fd_);
  if (!temp_.empty()) unlink(temp_.c_str());
}

void AtomicFile::fail(int err) {
  if (target_.mode != OutputMode::stdout_ && fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!temp_.empty()) unlink(temp_.c_str());
  throw IoError(cannot_write(what_, path_, err));
}

void AtomicFile::flush_buffer() {
  if (buffer_.empty()) return;
  // Lines written to standard output through stdio go first (also to a descriptor that may be
  // standard output's file or pipe).
  if (target_.mode == OutputMode::stdout_ || target_.mode == OutputMode::descriptor) {
    std::fflush(stdout);
  }
  if (int err = write_all(fd_, buffer_.data(), buffer_.size()); err != 0) fail(err);
  buffer_.clear();
}

void AtomicFile::write(std::string_view text) {
  if (fd_ < 0) fail(EBADF);
  buffer_.append(text);
  if (buffer_.size() >= kBufferBytes) flush_buffer();
}

void AtomicFile::commit() {
  if (fd_ < 0) fail(EBADF);
  flush_buffer();
  if (target_.mode == OutputMode::stdout_) {
    fd_ = -1;
    return;
  }
  // A device or a FIFO has nothing to sync (fsync answers EINVAL) and is never renamed.
  if (target_.mode == OutputMode::replace && fsync(fd_) != 0) fail(errno);
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) fail(errno);
  if (target_.mode == OutputMode::replace && std::rename(temp_.c_str(), target_.path.c_str()) != 0)
    fail(errno);
  temp_.clear();
  if (target_.mode == OutputMode::replace) sync_directory();
}

void AtomicFile::sync_directory() const {
  // The rename is in the directory's data: until that reaches the disk, a crash can bring back
  // the old file (or none) after the run said the new one was written.
  const int fd = ::open(directory_of(target_.path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the file is in place; a directory we cannot open is not ours to sync
  const int err = fsync(fd) == 0 ? 0 : errno;
  close(fd);
  // Some file systems cannot sync a directory (EINVAL); the file itself was synced.
  if (err != 0 && err != EINVAL) throw IoError(cannot_write(what_, path_, err));
}

}  // namespace stockctl
