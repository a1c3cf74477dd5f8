#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "redis/client.h"
#include "redis/connection.h"
#include "redis/sentinel.h"
#include "redis/started_windows.h"

namespace stockctl {

/// A Client over one standalone server. Connects in the constructor, trying again for up to
/// --retry-timeout (throws ConnectionError); after the connection breaks, each retry reconnects.
/// Every connection is opened with `open` (a unit test hands it a scripted node).
class StandaloneClient : public Client {
 public:
  StandaloneClient(ConnectOptions options, ClientOptions client_options,
                   ConnectionFactory open = open_connection);

  /// Sends the window at once; its replies are read by finish() (or before any other command).
  void start(std::vector<Call> calls) override;
  std::vector<CallResult> finish() override;
  bool waits_for_replicas() const override { return wait_for_ > 0; }
  /// The server connected to (behind Sentinel, the master), else the URL's.
  std::string node_address(const std::string& node) const override;

 protected:
  std::vector<CallResult> send(const std::vector<Call>& calls) override;
  /// Behind sentinels: drops the connection, so the retry asks the sentinels for the master.
  void recover() noexcept override;

 private:
  /// A window on the wire: replies come back in the order windows were sent.
  struct InFlight {
    std::uint64_t id = 0;
    std::vector<Call> calls;
    std::vector<CallResult> results;
    bool wait = false;              ///< a WAIT follows the window's calls
    bool beside = false;            ///< that WAIT goes on the side connection (wait_beside)
    std::uint64_t conn_serial = 0;  ///< which connection (conn_serial_) it was sent on
    bool checked = false;  ///< behind sentinels: asked whether its server is still the master
    std::string server;    ///< where its WAIT was read
    std::size_t read = 0;  ///< replies read so far
    bool settled = false;  ///< every result is known (read, or lost with the connection)
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  };

  std::vector<CallResult> send_raw(const std::vector<Call>& calls);
  /// Queues a window and writes it out; a `pipelined` window (start()) may be waited for on
  /// the side connection.
  InFlight& transmit(std::vector<Call> calls, bool pipelined);
  /// Whether the WAIT of a pipelined window can go on the side connection, which it opens
  /// (and tries) the first time: only on a server named by its own URL (behind Sentinel the
  /// checks of each window's master stay on one connection).
  bool can_wait_beside();
  /// Once every call of a window is answered (it ran, and its writes are in the replication
  /// stream): writes the mark key on the side connection and WAITs there. Returns how many
  /// replicas acknowledged the mark, and with it every write before it; 0 when the side
  /// connection failed, which then is used no more.
  int wait_beside();
  void read_replies(InFlight& window);
  /// Behind sentinels: idempotent writes that too few replicas acknowledged become unknown.
  void unconfirmed_is_unknown(InFlight& window) const;
  /// Behind sentinels, for a window read whose WAIT fell short while the sentinels still name
  /// its master: asks the master's ROLE (after reading the windows sent since). Its idempotent
  /// writes are sent again (unconfirmed_is_unknown) only when the master has fewer replicas
  /// attached than were waited for, as when a failover has promoted its replica; else the
  /// master is asked to WAIT once more (wait_again), and what it still does not confirm keeps
  /// its answer, reported as not confirmed.
  void judge_unconfirmed(InFlight& window);
  void wait_again(InFlight& window);
  /// Whether an idempotent write of `window` was answered and too few replicas acknowledged it.
  static bool has_unconfirmed(const InFlight& window);
  /// The most replicas a write of `window` was waited for.
  static int window_wanted(const InFlight& window);
  /// Behind sentinels, after a window of writes is read: when the sentinels name another master
  /// than the server that took them, every write of the window has an unknown outcome (the old
  /// master may take writes for seconds, and loses them when it is demoted), and the next
  /// window goes to the master they name.
  void confirm_master(InFlight& window);
  /// How many replicas to WAIT for on the new connection (ROLE counts the attached ones when
  /// --wait-replicas was not given); warns once when a master behind sentinels has none.
  int replicas_to_wait_for_here();
  /// Reads every window still on the wire, so that a new command's reply comes next.
  void drain();
  /// The connection broke: whatever was sent and not answered has an unknown outcome.
  void lose_connection(const std::string& why);
  /// Calls that did not run for want of a script (see ScriptMiss): loads the library, or
  /// switches to EVALSHA where the server refuses Functions and loads the scripts, then sends
  /// them again. Returns whether there were any.
  bool reload_missing_scripts(const std::vector<Call>& calls, std::vector<CallResult>& results);
  /// Marks the calls at `where` as never sent, for `why`: their script's load got no answer.
  /// Returns true.
  static bool not_sent_for_load(const std::vector<std::size_t>& where,
                                std::vector<CallResult>& results, const std::string& why);
  /// Opens the connection, calling scripts the way this server is known to take them.
  void connect();
  /// With --verbose, says once how scripts are called.
  void announce_script_calls(const std::vector<Call>& calls);

  ConnectOptions options_;
  ConnectionFactory open_;
  std::unique_ptr<Connection> conn_;
  /// Where the WAIT of a pipelined window goes, so that it holds back no window on conn_.
  std::unique_ptr<Connection> side_;
  bool side_failed_ = false;       ///< the side connection could not be used: WAIT on conn_
  std::string conn_run_id_;        ///< conn_'s server process (INFO run_id) where it is waited for
  std::uint64_t conn_serial_ = 0;  ///< counts the connections conn_ has held
  StartedWindows<InFlight> in_flight_;
  ScriptCalls script_calls_ = ScriptCalls::functions;
  bool announced_ = false;
  int wait_for_ = 0;                      ///< replicas to WAIT for on conn_
  bool warned_unreplicated_ = false;      ///< the warning about a master without replicas
  std::unique_ptr<SentinelWatch> watch_;  ///< behind sentinels: who the master is now
  bool master_moved_ = false;             ///< the sentinels name another master than conn_'s
};

}  // namespace stockctl
