#pragma once

#include <string>

#include "cli/errors.h"

struct redisContext;

namespace stockctl {

/// The connection is unusable: cannot connect, closed, timed out, or refused our credentials.
/// What was in flight has an unknown outcome.
class ConnectionError : public StockctlError {
 public:
  explicit ConnectionError(const std::string& message)
      : StockctlError(ExitCode::failure, message) {}
};

/// The server answered, but trying again cannot help: it refused our credentials, or it is not
/// the kind of server asked for. Never retried.
class FatalConnectionError : public ConnectionError {
 public:
  explicit FatalConnectionError(const std::string& message) : ConnectionError(message) {}
};

/// The server refused our credentials, or wants some and we gave none.
class AuthenticationError : public FatalConnectionError {
 public:
  explicit AuthenticationError(const std::string& message) : FatalConnectionError(message) {}
};

/// Builds the error for a failed hiredis context: what broke, where, and for timeouts how long
/// we waited. `doing` says what we were doing ("connecting to", "talking to").
ConnectionError context_error(const redisContext* ctx, const std::string& doing,
                              const std::string& where, long long timeout_ms);

}  // namespace stockctl
