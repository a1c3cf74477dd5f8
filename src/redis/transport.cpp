#include "redis/transport.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "redis/errors.h"

namespace stockctl {
namespace {

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

long long left_until(long long deadline_ms) {
  long long left = deadline_ms - now_ms();
  return left > 0 ? left : 0;
}

// OpenSSL's socket BIO writes with write(2), which raises SIGPIPE on a connection the server
// closed; this one sends with MSG_NOSIGNAL instead, so TLS needs no signal mask either.
int bio_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const int fd = *static_cast<const int*>(BIO_get_data(bio));
  ssize_t n = send(fd, data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    BIO_set_retry_write(bio);
  }
  return static_cast<int>(n);
}

int bio_read(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  const int fd = *static_cast<const int*>(BIO_get_data(bio));
  ssize_t n = recv(fd, data, static_cast<std::size_t>(size), 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    BIO_set_retry_read(bio);
  }
  return static_cast<int>(n);
}

long bio_ctrl(BIO* /*bio*/, int cmd, long /*num*/, void* /*ptr*/) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

BIO_METHOD* socket_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "stockctl socket");
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    return m;
  }();
  return method;
}

struct AddrFree {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};

}  // namespace

Transport::Transport(const RedisUrl& url, const TlsOptions& tls, const std::string& where,
                     long long connect_timeout_ms)
    : kind_(url.kind),
      port_(url.port),
      connect_timeout_ms_(connect_timeout_ms),
      tls_(tls),
      host_(url.host),
      where_(where) {
  const long long deadline = now_ms() + connect_timeout_ms;
  try {
    connect_socket(url, deadline);
    if (tls.enabled) {
      handshake(url.host, deadline);
      probe(deadline);
    }
  } catch (...) {
    if (ssl_) SSL_free(ssl_);
    if (fd_ >= 0) close(fd_);
    throw;
  }
}

Transport::~Transport() {
  // No close_notify: the server learns of the end from the closed socket, as with plain TCP.
  if (ssl_) SSL_free(ssl_);
  if (fd_ >= 0) close(fd_);
}

bool Transport::wait(short events, long long timeout_ms) const {
  pollfd p{fd_, events, 0};
  for (;;) {
    int n = poll(&p, 1, static_cast<int>(timeout_ms));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return true;  // the next call on the socket reports the error
  }
}

int Transport::try_connect(const sockaddr* addr, socklen_t size, int family, long long deadline) {
  fd_ = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return errno;
  if (connect(fd_, addr, size) == 0) return 0;
  if (errno != EINPROGRESS && errno != EAGAIN) return errno;
  if (!wait(POLLOUT, left_until(deadline))) return ETIMEDOUT;
  int err = 0;
  socklen_t err_size = sizeof err;
  getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &err_size);
  return err;
}

int Transport::connect_unix(const std::string& path, long long deadline) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path) return ENAMETOOLONG;
  std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  return try_connect(reinterpret_cast<sockaddr*>(&sa), sizeof sa, AF_UNIX, deadline);
}

int Transport::connect_tcp(const std::string& host, int port, long long deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); gai != 0) {
    throw ConnectionError(fmt::format("cannot connect to {}: {}", where_, gai_strerror(gai)));
  }
  std::unique_ptr<addrinfo, AddrFree> owned(found);
  int err = EADDRNOTAVAIL;
  // Every address the name has, in order ("localhost" may be ::1 first and 127.0.0.1 next).
  for (addrinfo* a = found; a; a = a->ai_next) {
    err = try_connect(a->ai_addr, a->ai_addrlen, a->ai_family, deadline);
    if (err == 0 || err == ETIMEDOUT) break;
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  if (err == 0) {
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return err;
}

void Transport::connect_socket(const RedisUrl& url, long long deadline) {
  const long long total = left_until(deadline);
  const int err = url.kind == RedisUrl::Kind::unix_socket
                      ? connect_unix(url.path, deadline)
                      : connect_tcp(url.host, url.port, deadline);
  if (err == ETIMEDOUT) throw timeout_error("cannot connect to", where_, total);
  if (err != 0) {
    throw ConnectionError(fmt::format("cannot connect to {}: {}", where_, strerror(err)));
  }
}

void Transport::fail_tls(const char* doing, int ssl_result) const {
  const int code = SSL_get_error(ssl_, ssl_result);
  std::string why = tls_failure_reason(ssl_, tls_, host_);
  if (why.empty() && (code == SSL_ERROR_ZERO_RETURN || code == SSL_ERROR_SYSCALL)) {
    // Closed without a word: a server going down does that too, so this one is retried.
    throw ConnectionError(fmt::format(
        "{} {}: {} (is this a TLS port? a plain port needs redis:// without --tls)", doing, where_,
        errno != 0 && code == SSL_ERROR_SYSCALL && ssl_result < 0
            ? strerror(errno)
            : "the server closed the connection"));
  }
  if (why.empty()) why = "TLS error";
  throw TlsError(fmt::format("{} {}: {}", doing, where_, why));
}

void Transport::fail_io(int ssl_result) const {
  // During the probe a TLS error is the server's verdict on us; later, the connection broke.
  if (probing_) fail_tls("TLS handshake with", ssl_result);
  std::string why = tls_failure_reason(ssl_, tls_, host_);
  throw ConnectionError(fmt::format("talking to {}: {}", where_, why.empty() ? "TLS error" : why));
}

void Transport::handshake(const std::string& host, long long deadline) {
  ssl_ = SSL_new(tls_context(tls_));
  if (!ssl_) throw TlsError(fmt::format("cannot set up TLS for {}", where_));
  BIO* bio = BIO_new(socket_method());
  BIO_set_data(bio, &fd_);  // the Transport outlives its session
  BIO_set_init(bio, 1);
  SSL_set_bio(ssl_, bio, bio);
  tls_prepare(ssl_, tls_, host);
  ERR_clear_error();
  for (;;) {
    errno = 0;
    int r = SSL_connect(ssl_);
    if (r == 1) return;
    int code = SSL_get_error(ssl_, r);
    if (code != SSL_ERROR_WANT_READ && code != SSL_ERROR_WANT_WRITE)
      fail_tls("TLS handshake with", r);
    long long total = left_until(deadline);
    if (!wait(code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, total)) no_tls_answer();
  }
}

void Transport::no_tls_answer() const {
  // A plain Redis takes a ClientHello for the start of an inline command and waits for its
  // end; a plain PING on a new connection tells it from a paused TLS server.
  if (answer_to_plain_ping(connect_timeout_ms_) == PlainAnswer::resp) {
    throw TlsError(fmt::format(
        "TLS handshake with {}: the server speaks plain RESP on this port, not TLS (use "
        "redis:// without --tls, or the server's TLS port)",
        where_));
  }
  throw timeout_error("TLS handshake with", where_, connect_timeout_ms_);
}

void Transport::probe(long long deadline) {
  // With TLS 1.3 the server checks our certificate only after the handshake has finished on our
  // side; a PING round trip brings its verdict (or a NOAUTH, which is fine) now rather than as
  // a broken first command.
  probing_ = true;
  try {
    write_all("*1\r\n$4\r\nPING\r\n", left_until(deadline) + 1);
    char line[256];
    std::size_t got = 0;
    while (got == 0 || line[got - 1] != '\n') {
      if (got == sizeof line) got = 0;  // a long error line: only its end matters
      got += read_some(line + got, sizeof line - got, left_until(deadline) + 1);
    }
    probing_ = false;
  } catch (const ConnectionError& e) {
    // A server that refused us may have reset the connection before our PING: its alert may
    // still wait to be read, and says why (a TlsError). Without one, the server may simply be
    // going down: retryable, with the likely cause named.
    try {
      char rest[256];
      while (read_some(rest, sizeof rest, -1) > 0) {
      }
    } catch (const ConnectionError&) {
      // nothing more to learn: the reason below stands
    }
    throw ConnectionError(fmt::format(
        "{} (right after the TLS handshake: does the server require a client certificate? give "
        "one with --cert and --key)",
        e.what()));
  }
}

void Transport::write_all(std::string_view data, long long timeout_ms) {
  while (!data.empty()) {
    short want = POLLOUT;
    long n;
    if (ssl_) {
      ERR_clear_error();
      errno = 0;
      int r = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
      n = r;
      if (r <= 0) {
        int code = SSL_get_error(ssl_, r);
        if (code == SSL_ERROR_WANT_READ) {
          want = POLLIN;
        } else if (code != SSL_ERROR_WANT_WRITE) {
          if (code == SSL_ERROR_SSL) fail_io(r);
          throw closed_or_system_error("talking to", where_, errno);
        }
      }
    } else {
      n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        throw closed_or_system_error("talking to", where_, errno);
      }
    }
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
    } else if (!wait(want, timeout_ms)) {
      throw timeout_error("talking to", where_, timeout_ms);
    }
  }
}

std::size_t Transport::read_some(char* buf, std::size_t size, long long timeout_ms) {
  for (;;) {
    short want = POLLIN;
    if (ssl_) {
      ERR_clear_error();
      errno = 0;
      int r = SSL_read(ssl_, buf, static_cast<int>(size));
      if (r > 0) return static_cast<std::size_t>(r);
      int code = SSL_get_error(ssl_, r);
      if (code == SSL_ERROR_ZERO_RETURN) throw closed_or_system_error("talking to", where_, 0);
      if (code == SSL_ERROR_WANT_WRITE) {
        want = POLLOUT;
      } else if (code != SSL_ERROR_WANT_READ) {
        if (code == SSL_ERROR_SSL) fail_io(r);
        throw closed_or_system_error("talking to", where_, r == 0 ? 0 : errno);
      }
    } else {
      ssize_t n = recv(fd_, buf, size, 0);
      if (n > 0) return static_cast<std::size_t>(n);
      if (n == 0) throw closed_or_system_error("talking to", where_, 0);
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        throw closed_or_system_error("talking to", where_, errno);
      }
    }
    if (timeout_ms < 0) return 0;
    if (!wait(want, timeout_ms)) throw timeout_error("talking to", where_, timeout_ms);
  }
}

bool Transport::pending() const { return ssl_ && SSL_pending(ssl_) > 0; }

Transport::PlainAnswer Transport::answer_to_plain_ping(long long timeout_ms) const {
  RedisUrl url;
  url.host = host_;
  url.port = port_;
  try {
    Transport again(url, TlsOptions{}, where_, timeout_ms);
    again.write_all("PING\r\n", timeout_ms);
    char first = 0;
    again.read_some(&first, 1, timeout_ms);
    if (first == '+' || first == '-') return PlainAnswer::resp;
    return first == 0x15 || first == 0x16 ? PlainAnswer::tls : PlainAnswer::other;
  } catch (const ConnectionError& e) {
    // Closed at once: what a TLS port does with plain text (and what no Redis does with a
    // PING). Refused or silent: gone or paused, which says nothing about TLS.
    return std::string(e.what()).find("closed the connection") != std::string::npos
               ? PlainAnswer::tls
               : PlainAnswer::other;
  }
}

bool Transport::peer_speaks_tls(long long timeout_ms) const {
  if (ssl_ || kind_ != RedisUrl::Kind::tcp) return false;
  return answer_to_plain_ping(timeout_ms) == PlainAnswer::tls;
}

}  // namespace stockctl
