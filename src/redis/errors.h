#pragma once

#include <string>

#include "cli/errors.h"

namespace stockctl {

/// The connection is unusable: cannot connect, closed, timed out, or refused our credentials.
/// What was in flight has an unknown outcome.
class ConnectionError : public StockctlError {
 public:
  explicit ConnectionError(const std::string& message)
      : StockctlError(ExitCode::failure, message) {}
};

/// No answer within `timeout_ms`. `doing` says what we were doing ("cannot connect to",
/// "talking to"), `where` names the server.
ConnectionError timeout_error(const std::string& doing, const std::string& where,
                              long long timeout_ms);

/// The server closed the connection (`err` 0) or the socket failed with errno `err`.
ConnectionError closed_or_system_error(const std::string& doing, const std::string& where, int err);

}  // namespace stockctl
