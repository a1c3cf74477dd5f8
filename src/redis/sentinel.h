#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "redis/connection.h"

namespace stockctl {

/// For a redis+sentinel:// URL: asks the sentinels for the master's address (with the
/// sentinels' own credentials and the same TLS settings), connects to it with the URL's
/// credentials and database, and confirms with ROLE that it is a master. Only an address named
/// with the highest configuration epoch is tried (sentinels_masters_to_try in
/// core/replication.h): a sentinel that has not heard of a failover yet names the old master,
/// which may still say it is one. A sentinel that is down or does not know the master is
/// passed over. Throws ConnectionError naming what each sentinel said (a failover in progress,
/// the new master not promoted yet: retry later), or TlsError. Every connection is opened with
/// `open` (a unit test hands it scripted nodes).
std::unique_ptr<Connection> connect_to_master(const ConnectOptions& options,
                                              const ConnectionFactory& open = open_connection);

/// Asks the sentinels of a redis+sentinel:// URL which server is the master now, over
/// connections kept from one question to the next: the check a client makes after each window
/// of writes, so that it never reports a write taken by a master the sentinels have replaced.
class SentinelWatch {
 public:
  explicit SentinelWatch(const ConnectOptions& options);
  ~SentinelWatch();
  SentinelWatch(const SentinelWatch&) = delete;
  SentinelWatch& operator=(const SentinelWatch&) = delete;

  /// "host:port" of the master the sentinels name (see sentinels_master in core/replication.h),
  /// asked of every sentinel at once; nullopt when none answered. Never throws: a sentinel that
  /// fails is asked again on a later call, not before a second has passed, so that one that is
  /// down costs no connection attempt per window.
  std::optional<std::string> master();

 private:
  using Clock = std::chrono::steady_clock;
  struct Link {
    ConnectOptions options;
    std::unique_ptr<Connection> conn;
    Clock::time_point retry_at{};
  };
  std::string name_;
  std::vector<Link> links_;
};

}  // namespace stockctl
