#pragma once

#include <poll.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "redis/client.h"
#include "redis/connection.h"

namespace stockctl {

/// Many connections to one server (or to a cluster's nodes) driven by one thread, as
/// redis-benchmark drives its clients: calls are sent raw on a chosen connection (no retries,
/// redirects or script reloading: see load_scripts_for_raw_calls), and replies are handed back as
/// they arrive, from whichever connection has one. Each connection answers its own calls in the
/// order they were sent.
class PipelinedConnections {
 public:
  /// One reply of connection `connection`, or nothing when the connection broke before the
  /// reply came (then the connection is closed for good and sends nothing more).
  using OnReply = std::function<void(std::size_t connection, const std::optional<Reply>& reply)>;

  /// Opens `count` connections with `open` (TLS, Sentinel and credentials as `options` say),
  /// calling scripts as `calls`. Throws ConnectionError (AuthenticationError, TlsError).
  PipelinedConnections(const ConnectOptions& options, std::size_t count, ScriptCalls calls,
                       const ConnectionFactory& open = open_connection);
  /// One connection for each of `each` (a cluster's nodes: each with its own address).
  PipelinedConnections(const std::vector<ConnectOptions>& each, ScriptCalls calls,
                       const ConnectionFactory& open = open_connection);

  std::size_t size() const { return connections_.size(); }
  /// Whether `connection` still works (a broken one is closed and sends nothing more).
  bool is_open(std::size_t connection) const { return connections_[connection] != nullptr; }
  /// Calls sent on any connection whose replies have not been handed back yet.
  std::size_t outstanding() const { return outstanding_total_; }

  /// Writes `call` on `connection`, which must be open. Throws ConnectionError when the write
  /// fails.
  void send(std::size_t connection, const Call& call);

  /// Waits for the next reply of `connection` alone (for callers that ask one node in turn,
  /// like doctor). Throws ConnectionError when the connection breaks or times out.
  Reply next_reply(std::size_t connection);
  /// send() + next_reply().
  Reply call(std::size_t connection, const Call& call);
  /// "host:port" of `connection` for messages: behind sentinels, the master they named.
  const std::string& where(std::size_t connection) const {
    return connections_[connection]->where();
  }

  /// Waits, up to the options' timeout, until replies arrive, and hands each to `on_reply`,
  /// which may send the next calls. Returns false when calls are outstanding and nothing
  /// arrived in time (or the wait was interrupted); true otherwise, at once when nothing is
  /// outstanding.
  bool deliver_replies(const OnReply& on_reply);

 private:
  /// Reads the replies connection `index` has for the calls outstanding when the socket was
  /// found readable; a broken connection is closed and each of its calls handed back empty.
  void read_connection(std::size_t index, const OnReply& on_reply);

  long long timeout_ms_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<std::size_t> outstanding_;  ///< per connection
  std::size_t outstanding_total_ = 0;
  std::vector<pollfd> polled_fds_;
  std::vector<std::size_t> polled_;  ///< the connection of each polled_fds_ entry
};

/// Makes `scripts` callable on raw connections, which do not recover a missing script as a
/// Client does: loads their Functions library through `client` on every primary, or, where the
/// server refuses Functions, loads each script for EVALSHA. Returns how to call them. Throws
/// StockctlError when a script cannot be loaded, ConnectionError when no reply came.
ScriptCalls load_scripts_for_raw_calls(Client& client, const std::vector<const Script*>& scripts);

}  // namespace stockctl
