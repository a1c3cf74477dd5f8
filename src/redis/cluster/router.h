#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "redis/client.h"
#include "redis/cluster/slot_map.h"
#include "redis/connection.h"
#include "redis/started_windows.h"

namespace stockctl {

/// A Client over a Redis Cluster: discovers the slot map from any node (CLUSTER SLOTS), routes
/// every call by its first key's slot, follows MOVED and ASK within a bound, and loads scripts
/// on each node that lacks them.
///
/// Windows in flight: a window's calls are written to their nodes as soon as it is started, and
/// replies are read from whichever node has them (poll over the node sockets), each routed back
/// to its window and call. Every node works on every started window at once; a redirect or a
/// script reload is sent as soon as its reply is read, behind whatever that node already has.
/// finish() hands back the oldest started window once all of its replies are in.
class ClusterClient : public Client {
 public:
  /// Discovers the cluster through the node `seed` names, opening every node with `open`.
  /// Throws ConnectionError.
  ClusterClient(ConnectOptions seed, ClientOptions client_options,
                ConnectionFactory open = open_connection);
  ~ClusterClient() override;

  std::vector<std::string> primaries() override;
  std::string slot_owner(int slot) override;
  bool waits_for_replicas() const override;
  /// Sends to that node directly; a broken connection is retried within --retry-timeout (the
  /// calls sent this way are reads) and then reported by throwing ConnectionError.
  Reply call_on(const std::string& address, const Call& call) override;

  void start(std::vector<Call> calls) override;
  std::vector<CallResult> finish() override;

 protected:
  std::vector<CallResult> send(const std::vector<Call>& calls) override;
  /// Reads every reply still owed, then rediscovers the slot map (after a failover, a MOVED or
  /// a broken connection).
  void recover() noexcept override;

 private:
  using Clock = std::chrono::steady_clock;

  /// A write of a window whose WAIT counted too few replicas (or was lost with its node).
  struct Unconfirmed {
    std::size_t index;       ///< the call, in its window
    std::string written_to;  ///< the primary that took it
  };

  /// Calls started together, and what became of each so far.
  struct Window {
    std::uint64_t id = 0;
    std::vector<Call> calls;
    std::vector<CallResult> results;
    std::vector<int> hops;  ///< redirects and reloads followed, per call
    std::size_t owed = 0;   ///< replies (calls' and WAITs') still to come for it
    bool stale = false;     ///< a reply said the slot map is out of date
    /// Writes to resend (Call::resend_unconfirmed) that too few replicas acknowledged: after
    /// the map is read anew, those whose slot has another primary are sent again.
    std::vector<Unconfirmed> unconfirmed;
    Clock::time_point started;  ///< when its first attempt began (for --retry-timeout)
  };

  /// A write whose replicas the next WAIT on its node counts.
  struct Unwaited {
    std::uint64_t window;
    std::size_t index;
    int hop;
    int wanted;  ///< the replicas its WAIT asks for
  };

  /// One reply a node owes, in the order the commands were written.
  struct Owed {
    enum class Kind { call, asking, wait, load, load_library };
    Kind kind = Kind::call;
    std::uint64_t window = 0;
    std::size_t index = 0;  ///< the call, in its window
    int hop = 0;            ///< the call's hops when it was sent
    bool asking = false;    ///< the call went after ASKING
    std::uint64_t seq = 0;  ///< its place on the node's connection
  };

  struct Node {
    std::unique_ptr<Connection> conn;
    std::deque<Owed> owed;                    ///< replies to come, oldest first
    std::vector<Unwaited> unwaited;           ///< writes appended since the last WAIT
    std::deque<std::vector<Unwaited>> waits;  ///< the writes each WAIT owed counts, in order
    /// The seq of the last SCRIPT LOAD sent, per script: a NOSCRIPT for a call sent before it
    /// needs no other load.
    std::map<const Script*, std::uint64_t> loaded;
    /// The same for FUNCTION LOAD of the library (0: none sent yet).
    std::uint64_t library_loaded = 0;
    std::uint64_t appended = 0;  ///< commands appended so far
    int wait_for = 0;            ///< replicas to WAIT for after its writes
    bool dirty = false;          ///< appended, not yet written
    Clock::time_point heard;     ///< the last write or reply: the timeout counts from it
  };

  struct Unreachable {
    std::string why;
    bool fatal = false;
  };

  void refresh();
  /// From a fresh CLUSTER SLOTS: how many replicas to WAIT for on each primary (the default
  /// waits for one where the map lists any), warning once about a primary left without one.
  void plan_waits(const std::map<std::string, int>& replicas);
  /// For a primary the map lists without a replica: asks its ROLE (by default only), waits for
  /// one if it has a replica attached after all, else warns once that it has none. False when
  /// it could not ask (the connection owes replies, or broke): n.wait_for is then unchanged.
  bool confirm_unreplicated(const std::string& address, Node& n);
  /// With --wait-replicas or by default: a write to resend (a row with a request id, see
  /// Call::resend_unconfirmed) that too few replicas acknowledged may be on a primary that a
  /// failover is replacing. It is noted, and the map is read anew before the window is
  /// answered (see resend_where_replaced).
  void note_unconfirmed(Window& window, std::size_t index, const std::string& written_to) const;
  /// After the map was read anew: a noted write whose slot the map now gives to another
  /// primary has an unknown outcome, so that it is sent there again (the new primary's ledger
  /// decides). One whose primary is still named keeps its answer: its caller reports it as
  /// applied on the primary with its durability not confirmed, instead of sending it again to
  /// the same primary, whose lagging replica would make every try wait --wait-timeout for
  /// nothing until --retry-timeout.
  void resend_where_replaced(Window& window) const;
  /// The connection to `address`, connecting on first use. Throws ConnectionError.
  Node& node(const std::string& address);

  /// Opens a window and writes its calls to their nodes. Returns its id.
  std::uint64_t open(std::vector<Call> calls);
  /// Appends call `index` of window `id` to `address`'s pipeline (after ASKING when `asking`).
  /// Returns the node it went to, or null when `address` cannot be reached (the call's result
  /// says why).
  Node* dispatch(std::uint64_t id, std::size_t index, const std::string& address, bool asking);
  /// Appends call `index` of `window` to node `n`'s pipeline.
  void enqueue(Node& n, Window& window, std::size_t index, bool asking);
  /// Writes what was appended to each node, each write batch followed by its WAIT.
  void flush_all();
  /// Reads and handles replies until window `id` owes nothing.
  void complete(std::uint64_t id);
  /// Reads and handles replies until no node owes any.
  void drain();
  /// One round: writes what is appended, handles the replies that arrived, or waits for some.
  /// False when no node owes a reply.
  bool pump();
  /// Handles every reply `address` has ready; false when none was.
  bool read_arrived(const std::string& address);
  void handle(const std::string& address, const Owed& owed, Reply reply);
  /// Follows a redirect or a missing script or library (see ScriptMiss); false when the reply
  /// is the call's answer.
  bool follow(Window& window, const Owed& owed, const std::string& address);
  /// The connection broke: every call it owed a reply has an unknown outcome.
  void fail_node(const std::string& address, const std::string& why);
  /// The connection broke before the WAIT that counts write `w` answered: the write is not
  /// confirmed, and one to resend (Call::resend_unconfirmed) has an unknown outcome.
  static void wait_lost(Window& window, const Unwaited& w, const std::string& why);
  /// Gives a TRYAGAIN reply of a window whose replies are all in the slot and the cause.
  static void describe_tryagain(Window& window);

  ConnectOptions seed_;
  ConnectionFactory open_;
  SlotMap slots_;
  std::map<std::string, Node> nodes_;
  /// Started by start(), oldest first, then at most one attempt of run() being answered.
  StartedWindows<Window> windows_;
  bool announced_ = false;            ///< --verbose said how scripts are called
  const Library* library_ = nullptr;  ///< the scripts' library, for messages
  /// Nodes that could not be reached in the current round: asked once per round, not per call.
  std::map<std::string, Unreachable> unreachable_;
  std::map<std::string, int> wait_for_;  ///< per primary, from the last CLUSTER SLOTS
  std::set<std::string> warned_;         ///< primaries named as without a replica
  bool replicas_expected_ = false;       ///< the last map listed a replica for some primary
};

}  // namespace stockctl
