#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/reply.h"
#include "redis/url.h"

struct redisContext;

namespace stockctl {

/// Everything needed to open a connection.
struct ConnectOptions {
  RedisUrl url;
  std::optional<std::string> user;
  std::optional<std::string> password;
  long long connect_timeout_ms = 2000;
  long long timeout_ms = 5000;
};

/// One connection to one Redis server: connect, AUTH, SELECT, timeouts, argv commands and
/// pipelining. The only place that owns a hiredis context.
class Connection {
 public:
  /// Connects, authenticates and selects the database. Throws ConnectionError
  /// (AuthenticationError when the credentials are refused or missing).
  explicit Connection(const ConnectOptions& options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Queues a command (sent as argv: no user data is ever formatted into command text).
  void append(const std::vector<std::string>& argv);
  /// Queues one command whose argv is `head` followed by `tail`, without copying them into one
  /// vector first (EVALSHA sha numkeys + the call's arguments).
  void append(std::initializer_list<std::string_view> head, const std::vector<std::string>& tail);
  /// Sends what is queued and reads the next reply. Throws ConnectionError when the connection
  /// breaks or times out; error replies are returned, not thrown.
  Reply read();
  /// append() + read().
  Reply command(const std::vector<std::string>& argv);

  /// For event loops (stockctl bench): the socket, to poll for readability.
  int fd() const;
  /// Writes everything appended so far. Throws ConnectionError.
  void flush();
  /// After poll() said the socket is readable: reads what has arrived and returns one complete
  /// reply if there is one. Throws ConnectionError when the connection broke.
  std::optional<Reply> read_ready();

  /// "host:port" for messages.
  const std::string& where() const { return where_; }

 private:
  /// AUTH, or PING when there is no password. Throws AuthenticationError when the server
  /// refuses our credentials or wants some.
  void authenticate(const ConnectOptions& options);

  struct Free {
    void operator()(redisContext* ctx) const;
  };
  std::unique_ptr<redisContext, Free> ctx_;
  std::string where_;
  long long timeout_ms_;
  std::string resp_;  ///< reused buffer for one command's RESP
};

}  // namespace stockctl
