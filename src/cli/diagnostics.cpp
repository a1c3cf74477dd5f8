#include "cli/diagnostics.h"

#include <fmt/format.h>

#include <cstdio>

namespace stockctl {

void print_error(std::string_view message) { fmt::print(stderr, "stockctl: error: {}\n", message); }

void print_warning(std::string_view message) {
  fmt::print(stderr, "stockctl: warning: {}\n", message);
}

}  // namespace stockctl
