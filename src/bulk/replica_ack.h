#pragma once

#include "core/outcome.h"
#include "redis/client.h"

namespace stockctl {

/// With --wait-replicas N: turns an applied write that fewer than N replicas acknowledged
/// into an error that says it was applied on the primary but is not confirmed durable.
void check_durability(ItemResult& item, const CallResult& result, const ClientOptions& options);

}  // namespace stockctl
