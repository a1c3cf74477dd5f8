#pragma once

#include <string>

#include "base/errors.h"

namespace stockctl {

/// The connection is unusable: cannot connect, closed, timed out, or refused our credentials.
/// What was in flight has an unknown outcome.
class ConnectionError : public StockctlError {
 public:
  explicit ConnectionError(const std::string& message) : StockctlError(message) {}
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

/// No answer in time: the server is down, paused, or the path to it drops packets.
class TimeoutError : public ConnectionError {
 public:
  explicit TimeoutError(const std::string& message) : ConnectionError(message) {}
};

/// No answer within `timeout_ms`. `doing` says what we were doing ("cannot connect to",
/// "talking to"), `where` names the server.
TimeoutError timeout_error(const std::string& doing, const std::string& where,
                           long long timeout_ms);

/// The server closed the connection (`err` 0) or the socket failed with errno `err`.
ConnectionError closed_or_system_error(const std::string& doing, const std::string& where, int err);

}  // namespace stockctl
