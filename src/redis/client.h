#pragma once

#include <chrono>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "redis/reply.h"
#include "redis/script.h"
#include "redis/started_windows.h"

namespace stockctl {

class Connection;
struct Call;
struct CallResult;

/// How a multi-key read is answered while its keys are split between two nodes by a slot
/// migration (the call's TRYAGAIN): by single-key reads, which follow ASK at once, combined into
/// a reply of the call's own shape. The reads are not one atomic moment, which a read may allow.
struct SplitRead {
  std::vector<Call> (*reads)(const Call& call);
  /// The reply the call would have given, from the reads' results (in order); an error result
  /// of a read is returned as it is.
  CallResult (*combine)(const Call& call, std::vector<CallResult> results);
};

/// One command for the server: a script call (EVALSHA with `args` = keys, then arguments) or,
/// when `script` is null, a plain command whose argv is `args`.
struct Call {
  const Script* script = nullptr;
  std::vector<std::string> args;
  bool idempotent = false;  ///< safe to send again when its outcome is unknown
  bool writes = false;      ///< counts for --wait-replicas
  /// On a cluster: a write that too few replicas confirmed is sent again (within
  /// --retry-timeout, after the slot map is read anew: a failover names the new primary, whose
  /// ledger decides) rather than answered "not confirmed". For a row with a request id; a
  /// caller with its own way on (the cart protocol stops, and a re-run finishes) leaves it off.
  bool resend_unconfirmed = false;
  /// For a script: how many of `args` are keys when the call sends fewer than the script can
  /// take (a deduction without request id sends its stock key alone); unset: all of them.
  std::optional<int> numkeys = std::nullopt;
  /// For a multi-key read: its single-key form, used at once on TRYAGAIN instead of waiting.
  const SplitRead* split = nullptr;

  /// Reads and other calls that change nothing can always be sent again, and never report an
  /// unknown outcome.
  bool reads_only() const { return idempotent && !writes; }

  /// A plain command that changes nothing (GET, TTL, SCAN, SCRIPT LOAD): always safe to resend.
  static Call read(std::vector<std::string> argv) { return Call{nullptr, std::move(argv), true}; }
  /// A plain write whose repeat leaves the same state (DEL, SET of a value): resent when its
  /// outcome is unknown, and counted for --wait-replicas.
  static Call idempotent_write(std::vector<std::string> argv) {
    return Call{nullptr, std::move(argv), true, true};
  }
  /// A plain write sent at most once, whose repeat would answer otherwise (GETDEL: a second
  /// one finds nothing), counted for --wait-replicas.
  static Call write_once(std::vector<std::string> argv) {
    return Call{nullptr, std::move(argv), false, true};
  }
  /// A plain command sent at most once and not waited for by replicas (SET NX of a lock).
  static Call once(std::vector<std::string> argv) { return Call{nullptr, std::move(argv)}; }
  /// A call of `script` with `keys`, then `args`; neither resent nor counted as a write until
  /// the caller says so (the builders in redis/scripts/ do).
  static Call script_call(const Script& script, std::vector<std::string> keys,
                          std::vector<std::string> args) {
    Call call{&script, std::move(keys)};
    call.numkeys = static_cast<int>(call.args.size());
    call.args.reserve(call.args.size() + args.size());
    call.args.insert(call.args.end(), std::make_move_iterator(args.begin()),
                     std::make_move_iterator(args.end()));
    return call;
  }
};

/// What became of one call.
struct CallResult {
  enum class State {
    replied,   ///< `reply` holds the answer (which may be an error reply)
    unknown,   ///< sent, but the connection broke before the reply: it may have been applied
    not_sent,  ///< never sent: certainly not applied
  };
  State state = State::not_sent;
  Reply reply;
  std::string error;        ///< why there is no reply
  int replicas_acked = -1;  ///< with --wait-replicas: replicas that acknowledged this write
  int replicas_wanted = 0;  ///< how many the WAIT after this write asked for (0: none)
  bool hopeless = false;    ///< not sent, and sending again cannot help (credentials refused)
  /// This answer came from a retry after an attempt whose outcome was unknown: a write it
  /// finds may be that attempt's own (an answer lost to a stall, a broken connection).
  bool after_unknown = false;
};

/// How a client retries and waits for replicas.
struct ClientOptions {
  long long retry_timeout_ms = 10000;  ///< how long to keep retrying what is safe to retry
  /// WAIT for this many replicas after writes; kWaitReplicasAuto (core/replication.h): one
  /// where the primary written to has a replica attached.
  int wait_replicas = 0;
  long long wait_timeout_ms = 1000;
  long long reply_timeout_ms = 5000;  ///< --timeout: how long one reply may take
};

/// The seam every command talks to Redis through: a standalone server today; a cluster router
/// can stand behind the same interface.
class Client {
 public:
  explicit Client(ClientOptions options) : options_(options) {}
  virtual ~Client() = default;

  /// Sends `calls` pipelined and returns one result per call, in order. Never throws for a
  /// connection that breaks midway: calls left without a reply are marked unknown or not_sent.
  /// Retries, for up to retry_timeout_ms, what is safe to retry: calls never sent, calls whose
  /// outcome is unknown but that are idempotent (a request id makes a deduction so), and
  /// replies that say nothing was applied (TRYAGAIN, CLUSTERDOWN, LOADING, READONLY,
  /// MASTERDOWN). After a whole retry period fails, later runs stop waiting until one succeeds;
  /// an interrupt (SIGINT, SIGTERM) stops the retries too. A result left without a reply says
  /// what was tried: "not applied: ..." or "outcome unknown: ..." for writes, the plain reason
  /// for reads, with "(N tries over M ms)" when it was retried.
  std::vector<CallResult> run(const std::vector<Call>& calls);

  /// Runs one call and returns its reply (possibly an error reply). Throws ConnectionError when
  /// no reply came.
  Reply call(const Call& call);

  /// Pipelining across windows: start() queues a window and may send it at once; finish()
  /// returns the results of the oldest started window, as run() would have (retries included).
  /// Windows are finished in the order they were started. A bulk path keeps two windows
  /// started, so the server works on one while the client reads the file for the next. A run()
  /// between the two is sent after whatever was already started.
  virtual void start(std::vector<Call> calls);
  virtual std::vector<CallResult> finish();

  /// The primaries that together hold every key: one name per node ("" for a standalone
  /// server). Throws ConnectionError when a cluster leaves slots without a primary.
  virtual std::vector<std::string> primaries() { return {""}; }
  /// The primary that serves `slot` in the slot map this client routes by ("" on one server,
  /// or for a slot no node serves): one of primaries(), a name call_on takes.
  virtual std::string slot_owner(int /*slot*/) { return {}; }
  /// Whether writes wait for replicas (a WAIT after each window) on some primary, as far as
  /// the connections made so far tell.
  virtual bool waits_for_replicas() const { return false; }
  /// The address of `node`, one of primaries(), for a message: "host:port" (a unix socket's
  /// path), never the "" a standalone server is named by.
  virtual std::string node_address(const std::string& node) const { return node; }
  /// Runs one keyless call (SCAN, ...) on `node`, one of primaries(), and returns its reply.
  /// Throws ConnectionError when no reply came.
  virtual Reply call_on(const std::string& node, const Call& call);

  const ClientOptions& options() const { return options_; }

 protected:
  /// One attempt: sends the calls (following redirects, reloading scripts) and reports each.
  virtual std::vector<CallResult> send(const std::vector<Call>& calls) = 0;
  /// Called before a retry: reconnect, rediscover the cluster. Must not throw.
  virtual void recover() noexcept {}
  /// With --wait-replicas: queues, after a window of writes on `conn`, the WAIT for `replicas`
  /// that counts the replicas holding every write the connection made so far.
  void append_wait(Connection& conn, int replicas) const;
  /// Reads that WAIT's reply: how many replicas acknowledged. The server holds the reply up to
  /// --wait-timeout, so the read waits that long beyond --timeout.
  int read_wait(Connection& conn) const;
  /// Retries what run() would retry in `results` (the first attempt at `calls`, made at
  /// `started`), within --retry-timeout of `started`, then says what became of each.
  std::vector<CallResult> settle(const std::vector<Call>& calls, std::vector<CallResult> results,
                                 std::chrono::steady_clock::time_point started);
  /// Answers the reads in `results` that a slot migration refused with TRYAGAIN and that have
  /// a split form (Call::split), by their single-key reads, all in one run.
  void split_refused_reads(const std::vector<Call>& calls, std::vector<CallResult>& results);
  /// Runs `connect` (which throws ConnectionError) until it succeeds, for up to
  /// --retry-timeout: nothing was sent yet, so trying again cannot apply anything twice.
  /// FatalConnectionError (credentials refused, ...) is thrown at once.
  void connect_retrying(const std::function<void()>& connect) const;

 private:
  ClientOptions options_;
  bool down_ = false;
  struct Queued {
    std::uint64_t id = 0;
    std::vector<Call> calls;
  };
  StartedWindows<Queued> queued_;  ///< default start(): sent only at finish()
};

/// Whether a call may be sent again after this result without risking a double application.
bool retryable(const Call& call, const CallResult& result);

}  // namespace stockctl
