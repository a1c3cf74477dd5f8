#pragma once

#include <string>

#include "core/outcome.h"
#include "redis/client.h"

namespace stockctl {

/// With --wait-replicas N: turns an applied write that fewer than N replicas acknowledged
/// into an error that says it was applied on the primary but is not confirmed durable.
void check_durability(ItemResult& item, const CallResult& result, const ClientOptions& options);

/// True unless the client waited for N replicas after `result` (--wait-replicas N, or the
/// default) and fewer acknowledged it.
bool acknowledged(const CallResult& result, const ClientOptions& options);

/// "applied on the primary, but its durability is not confirmed: A of N replicas acknowledged
/// within T ms": the error of a write (a cart, a settle) that `acknowledged` refused.
std::string unacknowledged(const CallResult& result, const ClientOptions& options);

}  // namespace stockctl
