#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/reply.h"
#include "redis/tls.h"
#include "redis/url.h"

struct redisReader;

namespace stockctl {

class Transport;

/// How a connection calls the embedded scripts.
enum class ScriptCalls {
  functions,  ///< FCALL of the library's functions (Redis 7 Functions): the default
  evalsha,    ///< EVALSHA, on a server that has no Functions for us (before 7, ACL, proxy)
};

/// Everything needed to open a connection.
struct ConnectOptions {
  RedisUrl url;
  std::optional<std::string> user;
  std::optional<std::string> password;
  long long connect_timeout_ms = 2000;
  long long timeout_ms = 5000;
  TlsOptions tls;                                ///< TLS when tls.enabled (rediss:// or --tls)
  std::optional<std::string> sentinel_user;      ///< for a sentinel URL's sentinels
  std::optional<std::string> sentinel_password;  ///< for a sentinel URL's sentinels
};

/// One connection to one Redis server: connect (TCP, unix socket or TLS), AUTH, SELECT,
/// timeouts, argv commands and pipelining. Replies are parsed by hiredis's reader; the bytes
/// travel over stockctl's own Transport (hiredis 0.14 has no TLS).
class Connection {
 public:
  /// Connects, authenticates and selects the database. Throws ConnectionError
  /// (AuthenticationError when the credentials are refused or missing), or TlsError for a TLS
  /// failure that retrying cannot cure.
  explicit Connection(const ConnectOptions& options);
  virtual ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Queues a command (sent as argv: no user data is ever formatted into command text).
  void append(const std::vector<std::string>& argv);
  /// Queues one command whose argv is `head` followed by `tail`, without copying them into one
  /// vector first (EVALSHA sha numkeys + the call's arguments).
  virtual void append(std::initializer_list<std::string_view> head,
                      const std::vector<std::string>& tail);
  /// Sends what is queued and reads the next reply. Throws ConnectionError when the connection
  /// breaks or times out; error replies are returned, not thrown.
  virtual Reply read();
  /// read() of a reply the server may hold back for `extra_ms` on purpose (WAIT holds its
  /// reply up to its timeout): the wait for it lasts up to `extra_ms` beyond the timeout.
  Reply read_beyond_timeout(long long extra_ms);
  /// append() + read().
  Reply command(const std::vector<std::string>& argv);

  /// For event loops (stockctl bench): the socket, to poll for readability. Call read_ready()
  /// until it returns nothing before polling: TLS may hold decrypted bytes poll() cannot see.
  virtual int fd() const;
  /// Writes everything appended so far. Throws ConnectionError.
  virtual void flush();
  /// After poll() said the socket is readable: reads what has arrived and returns one complete
  /// reply if there is one. Throws ConnectionError when the connection broke.
  virtual std::optional<Reply> read_ready();

  /// "host:port" for messages.
  const std::string& where() const { return where_; }

  /// How scripts are called here. A new connection tries Functions; a server that refuses
  /// them switches it to EVALSHA for good.
  ScriptCalls script_calls() const { return script_calls_; }
  void set_script_calls(ScriptCalls calls) { script_calls_ = calls; }

  /// Behind Sentinel, the replicas of this master that the sentinels that named it see alive
  /// (attached now or not: a failover promoting one detaches it first); 0 elsewhere.
  int sentinel_replicas() const { return sentinel_replicas_; }
  void set_sentinel_replicas(int replicas) { sentinel_replicas_ = replicas; }

 protected:
  /// For test doubles (tests/unit/fake_node.h), which override the virtual members: opens
  /// nothing.
  explicit Connection(std::string where);

 private:
  /// AUTH, or PING when there is no password. Throws AuthenticationError when the server
  /// refuses our credentials or wants some.
  void authenticate(const ConnectOptions& options);
  /// command() for the constructor's own commands (AUTH, PING, SELECT).
  Reply setup_command(const std::vector<std::string>& argv);

  struct Free {
    void operator()(redisReader* reader) const;
  };
  /// A complete reply the reader already holds, if any.
  std::optional<Reply> next_buffered();
  /// Reads from the transport into the reader; waits up to the timeout when `wait`.
  void fill(bool wait);
  TlsError speaks_tls() const;

  std::string where_;
  ScriptCalls script_calls_ = ScriptCalls::functions;
  int sentinel_replicas_ = 0;
  long long timeout_ms_;
  long long extra_ms_ = 0;  ///< read_beyond_timeout's, while it reads
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<redisReader, Free> reader_;
  std::string out_;        ///< RESP appended and not yet written
  bool received_ = false;  ///< any byte ever came back (to recognise a TLS server)
};

/// Opens connections. Both clients (StandaloneClient, ClusterClient) open theirs through one, so
/// that a unit test can hand them scripted nodes; open_connection is the real one.
using ConnectionFactory = std::function<std::unique_ptr<Connection>(const ConnectOptions&)>;

/// Opens a real connection (see Connection's constructor).
std::unique_ptr<Connection> open_connection(const ConnectOptions& options);

}  // namespace stockctl
