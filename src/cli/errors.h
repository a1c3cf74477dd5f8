#pragma once

#include <stdexcept>
#include <string>

#include "cli/exit_code.h"

namespace stockctl {

/// An error that ends the run with a message on standard error and a given exit status.
class StockctlError : public std::runtime_error {
 public:
  StockctlError(ExitCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

/// Bad usage or invalid input: exit 2, nothing written.
class InputError : public StockctlError {
 public:
  explicit InputError(const std::string& message)
      : StockctlError(ExitCode::invalid_input, message) {}
};

/// A file could not be read or written: exit 1.
class IoError : public StockctlError {
 public:
  explicit IoError(const std::string& message) : StockctlError(ExitCode::failure, message) {}
};

}  // namespace stockctl
