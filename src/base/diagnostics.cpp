#include "base/diagnostics.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>

#include "base/text.h"

namespace stockctl {
namespace {
Verbosity g_verbosity = Verbosity::normal;
}  // namespace

void set_verbosity(Verbosity v) { g_verbosity = v; }

Verbosity verbosity() { return g_verbosity; }

// Every diagnostic is one line: control characters in user data (a SKU, a command's output)
// are escaped here, whatever built the message.
void print_error(std::string_view message) {
  fmt::print(stderr, "stockctl: error: {}\n", escape_control(message));
}

ItemErrorEcho::~ItemErrorEcho() {
  if (seen_ > limit_) print_error(fmt::format("{} more failed items not shown", seen_ - limit_));
}

void ItemErrorEcho::add(std::string_view sku, std::string_view error) {
  if (seen_++ < limit_) print_error(fmt::format("item {}: {}", quote_value(sku), error));
}

void print_warning(std::string_view message) {
  if (g_verbosity != Verbosity::quiet)
    fmt::print(stderr, "stockctl: warning: {}\n", escape_control(message));
}

void print_notice(std::string_view message) {
  const bool shown = g_verbosity == Verbosity::verbose ||
                     (g_verbosity == Verbosity::normal && isatty(fileno(stderr)) == 1);
  if (shown) fmt::print(stderr, "stockctl: {}\n", escape_control(message));
}

void print_info(std::string_view message) {
  if (g_verbosity == Verbosity::verbose)
    fmt::print(stderr, "stockctl: {}\n", escape_control(message));
}

}  // namespace stockctl
