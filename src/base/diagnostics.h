#pragma once

#include <cstddef>
#include <string_view>

namespace stockctl {

/// How much goes to standard error besides errors.
enum class Verbosity { quiet, normal, verbose };

/// Sets the verbosity for the rest of the run (--quiet, --verbose).
void set_verbosity(Verbosity verbosity);
Verbosity verbosity();

/// Prints "stockctl: error: MESSAGE" on standard error (always), on one line: control
/// characters are escaped.
void print_error(std::string_view message);
/// Echoes failed items on standard error, the first `limit` of them and then a count, so that a
/// batch against a server that went away says what is wrong without flooding a terminal.
class ItemErrorEcho {
 public:
  explicit ItemErrorEcho(std::size_t limit = 20) : limit_(limit) {}
  ~ItemErrorEcho();
  ItemErrorEcho(const ItemErrorEcho&) = delete;
  ItemErrorEcho& operator=(const ItemErrorEcho&) = delete;
  void add(std::string_view sku, std::string_view error);

 private:
  std::size_t limit_;
  std::size_t seen_ = 0;
};

/// Prints "stockctl: warning: MESSAGE" on standard error, unless --quiet.
void print_warning(std::string_view message);
/// Prints "stockctl: MESSAGE" on standard error with --verbose only.
void print_info(std::string_view message);
/// Prints "stockctl: MESSAGE" on standard error with --verbose, and also without it when
/// standard error is a terminal (unless --quiet): for a wait a person would otherwise sit
/// through in silence. A cron job's log (not a terminal) gets it only with --verbose.
void print_notice(std::string_view message);

}  // namespace stockctl
