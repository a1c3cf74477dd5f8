#pragma once

#include <cstdint>
#include <string>

#include "holds/cart_store.h"
#include "holds/settle_answer.h"

namespace stockctl {

/// confirm, release or cancel of hold or order `id` on one Redis: one settle script. A settle
/// left without an answer is `error`, "not applied" or "outcome unknown" (a re-run finishes it).
Settled settle_on_one_redis(CartStore& store, const std::string& action, const std::string& id);

/// reap on one Redis: every expired hold's units back, a batch of items a call.
Reaped reap_on_one_redis(CartStore& store);

}  // namespace stockctl
