#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stockctl {

/// One sentinel's address.
struct SentinelAddress {
  std::string host;
  int port = 26379;
};

/// Where and as whom to connect, as a redis://, rediss://, unix:// or (rediss|redis)+sentinel://
/// URL says.
struct RedisUrl {
  enum class Kind { tcp, unix_socket, sentinel };
  Kind kind = Kind::tcp;
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string path;  ///< unix socket path
  int db = 0;
  std::optional<std::string> user;
  std::optional<std::string> password;
  bool tls = false;                        ///< rediss:// or rediss+sentinel://
  std::vector<SentinelAddress> sentinels;  ///< Kind::sentinel: asked in this order
  std::string master;                      ///< Kind::sentinel: the monitored master's name
};

/// Parses `redis://[[user][:password]@]host[:port][/db]` (`rediss://` for TLS),
/// `unix:///path[?db=N]` or `redis+sentinel://[[user][:password]@]host[:port][,host[:port]...]
/// /MASTER[/db]` (`rediss+sentinel://` for TLS); user and password percent-decoded, IPv6 hosts
/// in brackets. Returns why it cannot, or "". The message never repeats any part of the URL:
/// a password may stand anywhere in a mistyped one.
std::string parse_redis_url(std::string_view text, RedisUrl& url);

/// "host:port" or "unix:/path", for messages (never the password).
std::string describe_endpoint(const RedisUrl& url);

}  // namespace stockctl
