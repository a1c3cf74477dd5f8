#pragma once

#include <string>
#include <vector>

#include "redis/reply.h"
#include "scripts/script.h"

namespace stockctl {

/// One command for the server: a script call (EVALSHA with `args` = keys, then arguments) or,
/// when `script` is null, a plain command whose argv is `args`.
struct Call {
  const Script* script = nullptr;
  std::vector<std::string> args;
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
  std::string error;  ///< why there is no reply
};

/// The seam every command talks to Redis through: a standalone server today; a cluster router
/// can stand behind the same interface.
class Client {
 public:
  virtual ~Client() = default;

  /// Sends `calls` as one pipeline and returns one result per call, in order. Never throws for a
  /// connection that breaks midway: the calls left without a reply are marked unknown or
  /// not_sent. Scripts missing on the server (NOSCRIPT) are loaded and their calls re-sent.
  virtual std::vector<CallResult> run(const std::vector<Call>& calls) = 0;

  /// Runs one call and returns its reply (possibly an error reply). Throws ConnectionError when
  /// no reply came.
  Reply call(const Call& call);
};

}  // namespace stockctl
