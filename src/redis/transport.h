#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "redis/tls.h"
#include "redis/url.h"

namespace stockctl {

/// A connected byte stream to one server: TCP, a unix socket, or TLS over TCP. The socket is
/// non-blocking underneath; every wait is bounded by the timeout it is given. Failures throw
/// ConnectionError (retryable: refused, closed, timed out) or TlsError (not retryable).
/// Writing never raises SIGPIPE: a closed connection is an error like any other.
class Transport {
 public:
  /// Connects to `url` (with TLS when `tls.enabled`: handshake, chain and name verified),
  /// within `connect_timeout_ms` in all. `where` names the server in messages.
  Transport(const RedisUrl& url, const TlsOptions& tls, const std::string& where,
            long long connect_timeout_ms);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  int fd() const { return fd_; }
  bool tls() const { return ssl_ != nullptr; }

  /// Writes all of `data`; each wait for room in the socket lasts at most `timeout_ms`.
  void write_all(std::string_view data, long long timeout_ms);
  /// Reads what has arrived into `buf`. With `timeout_ms` < 0 it does not wait and returns 0
  /// when nothing is there; otherwise it waits up to `timeout_ms` for at least one byte.
  std::size_t read_some(char* buf, std::size_t size, long long timeout_ms);
  /// Bytes the TLS layer has already decrypted that poll() on fd() would not announce.
  bool pending() const;
  /// For a plain TCP connection the server closed before answering anything: whether a fresh
  /// connection to the same port is refused the way a TLS port refuses plain text (closed or
  /// answered with a TLS record) rather than answered in RESP. Never throws.
  bool peer_speaks_tls(long long timeout_ms) const;

 private:
  void connect_socket(const RedisUrl& url, long long deadline_ms);
  /// Each returns 0 or the errno that says why not (ETIMEDOUT past the deadline).
  int connect_unix(const std::string& path, long long deadline_ms);
  int connect_tcp(const std::string& host, int port, long long deadline_ms);
  int try_connect(const sockaddr* addr, socklen_t size, int family, long long deadline_ms);
  void handshake(const std::string& host, long long deadline_ms);
  void probe(long long deadline_ms);
  /// Waits for `events` on the socket; false on timeout.
  bool wait(short events, long long timeout_ms) const;
  [[noreturn]] void fail_tls(const char* doing, int ssl_result) const;
  /// The handshake got no answer in time: a plain port (TlsError) or a silent server.
  [[noreturn]] void no_tls_answer() const;
  enum class PlainAnswer { resp, tls, other };
  /// How the same port answers a plain PING on a new connection (for failure messages).
  PlainAnswer answer_to_plain_ping(long long timeout_ms) const;
  /// A TLS error on an established connection: ConnectionError (or TlsError while probing).
  [[noreturn]] void fail_io(int ssl_result) const;

  int fd_ = -1;
  ssl_st* ssl_ = nullptr;
  bool probing_ = false;
  RedisUrl::Kind kind_;
  int port_;
  long long connect_timeout_ms_;
  TlsOptions tls_;
  std::string host_;
  std::string where_;
};

}  // namespace stockctl
