#pragma once

#include <cstdint>
#include <string>

#include "holds/cart_store.h"
#include "holds/settle_answer.h"

namespace stockctl {

/// confirm, release or cancel of the cluster hold or order `id`: the record decides, then every
/// group is driven to the decision. Throws as durable_call does (holds/cart_record.h).
Settled settle_on_cluster(CartStore& store, const std::string& action, const std::string& id,
                          const ProtocolHooks& hooks);

/// reap on a cluster: every record whose time has come (a hold past its expiry, an attempt past
/// its deadline, a decision not yet carried to every group) is decided and finished.
Reaped reap_on_cluster(CartStore& store);

}  // namespace stockctl
