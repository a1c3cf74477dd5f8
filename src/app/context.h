#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/program.h"
#include "core/exit_fold.h"
#include "options/options.h"
#include "output/json_writer.h"
#include "redis/client.h"
#include "redis/pipelined_connections.h"

namespace stockctl {

/// What a running subcommand works with: the parsed common options, the key layout, the output
/// writer and (once asked for) the Redis client.
class Context {
 public:
  explicit Context(Program& program);

  const KeyScheme& scheme() const { return scheme_; }
  /// How this run writes change logs (--no-log, --log-max, --actor, --reason).
  const ChangeLogSettings& change_log() const { return change_log_; }
  JsonWriter& out() { return out_; }
  /// The client, connecting on first use. Throws ConnectionError or InputError; a refused
  /// login says which password sources were looked at.
  Client& redis();
  /// For bulk commands: the client, or null when no connection could be made. Then the reason
  /// has been printed once on standard error and is kept in connect_error(), and the command
  /// reports each row as not applied instead of failing the same way once per row.
  Client* redis_or_null();
  const std::string& connect_error() const { return connect_error_; }
  /// Names what the command was asked about, before it connects: when no connection can be
  /// made (refused, timed out, credentials refused), redis() calls `lines(reason)` once before
  /// it throws, so that every item still gets its line on standard output.
  void on_unconnected(std::function<void(const std::string& reason)> lines);
  /// on_unconnected for item lines: each item prints as `error` with the reason ("not applied:
  /// REASON" when `writes`), one already invalid as it is, in the order given.
  void on_unconnected(std::vector<ItemResult> items, bool writes);
  /// A new, separate client with the same settings (one per thread). Throws ConnectionError.
  std::unique_ptr<Client> new_client() const;
  /// For an event loop over many connections (bench): `count` connections to the server, opened
  /// as the client's are (TLS, Sentinel, credentials), calling scripts as `calls`. Throws
  /// ConnectionError.
  std::unique_ptr<PipelinedConnections> open_pipelined(std::size_t count, ScriptCalls calls) const;
  /// The same, one connection to each of `addresses` ("host:port": a cluster's nodes, opened
  /// with the seed's TLS and credentials). Throws ConnectionError.
  std::unique_ptr<PipelinedConnections> open_pipelined_to(const std::vector<std::string>& addresses,
                                                          ScriptCalls calls) const;

  /// Prints one item, counts it, and folds its status into the exit code.
  void emit(const ItemResult& item, ExitFold& fold);
  /// Counts an item that is reported elsewhere (init --file and rebuild write a summary).
  void count(const ItemResult& item) { stats_.add(item.status); }
  /// Counts an answer that is not an item's (a hold's, an order's, a settle's).
  void count(Status status) { stats_.add(status); }
  const RunStats& stats() const { return stats_; }

 private:
  void print_unconnected(const std::string& reason);

  const CommonOptions& options_;
  bool writes_;  ///< the subcommand can write stock (writes_stock)
  RunStats& stats_;
  KeyScheme scheme_;
  ChangeLogSettings change_log_;
  JsonWriter out_;
  std::unique_ptr<Client> client_;
  std::string connect_error_;
  std::function<void(const std::string&)> unconnected_lines_;
};

}  // namespace stockctl
