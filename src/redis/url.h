#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stockctl {

/// Where and as whom to connect, as a redis:// or unix:// URL says.
struct RedisUrl {
  enum class Kind { tcp, unix_socket };
  Kind kind = Kind::tcp;
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string path;  ///< unix socket path
  int db = 0;
  std::optional<std::string> user;
  std::optional<std::string> password;
};

/// Parses `redis://[[user][:password]@]host[:port][/db]` or `unix:///path[?db=N]` (user and
/// password percent-decoded, IPv6 hosts in brackets). Returns why it cannot, or "". The message
/// never repeats the URL, which may hold a password.
std::string parse_redis_url(std::string_view text, RedisUrl& url);

/// "host:port" or "unix:/path", for messages (never the password).
std::string describe_endpoint(const RedisUrl& url);

}  // namespace stockctl
