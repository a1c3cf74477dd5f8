#pragma once

#include <string_view>

namespace stockctl {

/// Prints "stockctl: error: MESSAGE" on standard error.
void print_error(std::string_view message);
/// Prints "stockctl: warning: MESSAGE" on standard error.
void print_warning(std::string_view message);

}  // namespace stockctl
