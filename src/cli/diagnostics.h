#pragma once

#include <string_view>

namespace stockctl {

/// How much goes to standard error besides errors.
enum class Verbosity { quiet, normal, verbose };

/// Sets the verbosity for the rest of the run (--quiet, --verbose).
void set_verbosity(Verbosity verbosity);
Verbosity verbosity();

/// Prints "stockctl: error: MESSAGE" on standard error (always).
void print_error(std::string_view message);
/// Prints "stockctl: warning: MESSAGE" on standard error, unless --quiet.
void print_warning(std::string_view message);
/// Prints "stockctl: MESSAGE" on standard error with --verbose only.
void print_info(std::string_view message);

}  // namespace stockctl
