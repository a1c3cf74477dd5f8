#include "bulk/replica_ack.h"

#include <fmt/format.h>

#include <algorithm>

namespace stockctl {

namespace {

std::string acked_text(const CallResult& result, const ClientOptions& options) {
  return fmt::format("{} of {} replicas acknowledged within {} ms",
                     std::max(result.replicas_acked, 0), options.wait_replicas,
                     options.wait_timeout_ms);
}

}  // namespace

bool acknowledged(const CallResult& result, const ClientOptions& options) {
  return options.wait_replicas <= 0 || result.replicas_acked >= options.wait_replicas;
}

std::string unacknowledged(const CallResult& result, const ClientOptions& options) {
  return "applied on the primary, but its durability is not confirmed: " +
         acked_text(result, options);
}

void check_durability(ItemResult& item, const CallResult& result, const ClientOptions& options) {
  if (acknowledged(result, options)) return;
  set_error(item, Status::error,
            fmt::format("applied on the primary (stock {}), but its durability is not confirmed: "
                        "{}",
                        item.stock ? std::to_string(*item.stock) : "unlimited",
                        acked_text(result, options)));
}

}  // namespace stockctl
