#pragma once

#include <stdexcept>
#include <string>

namespace stockctl {

/// An error that ends the run with a message on standard error. The class says what kind of
/// failure it is; only the top of the program (cli/error_exit.h) turns the kind into an exit
/// status, so that no layer below the command line knows the contract's exit codes. A plain
/// StockctlError is a runtime failure (exit 1).
class StockctlError : public std::runtime_error {
 public:
  explicit StockctlError(const std::string& message) : std::runtime_error(message) {}
};

/// Bad usage or invalid input: exit 2, nothing written.
class InputError : public StockctlError {
 public:
  explicit InputError(const std::string& message) : StockctlError(message) {}
};

/// A file could not be read or written: exit 1.
class IoError : public StockctlError {
 public:
  explicit IoError(const std::string& message) : StockctlError(message) {}
};

/// Another run holds what this one needs (exit 5).
class BusyError : public StockctlError {
 public:
  explicit BusyError(const std::string& message) : StockctlError(message) {}
};

/// The run stopped on SIGINT or SIGTERM before it could write anything (exit 130 or 143).
class InterruptedError : public StockctlError {
 public:
  InterruptedError(int signal, const std::string& message)
      : StockctlError(message), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

}  // namespace stockctl
