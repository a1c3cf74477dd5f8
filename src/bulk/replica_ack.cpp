#include "bulk/replica_ack.h"

#include <fmt/format.h>

namespace stockctl {

void check_durability(ItemResult& item, const CallResult& result, const ClientOptions& options) {
  if (options.wait_replicas <= 0 || result.replicas_acked >= options.wait_replicas) return;
  set_error(item, Status::error,
            fmt::format("applied on the primary (stock {}), but its durability is not confirmed: "
                        "{} of {} replicas acknowledged within {} ms",
                        item.stock ? std::to_string(*item.stock) : "unlimited",
                        std::max(result.replicas_acked, 0), options.wait_replicas,
                        options.wait_timeout_ms));
}

}  // namespace stockctl
