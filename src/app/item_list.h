#pragma once

// The items a command names on its command line (delete, rebalance): one result per SKU,
// checked before anything is sent.

#include <string>
#include <string_view>
#include <vector>

#include "app/context.h"
#include "core/exit_fold.h"
#include "core/outcome.h"

namespace stockctl {

/// One item per SKU for `op`: its key, or `invalid` with the reason.
std::vector<ItemResult> named_items(const Context& ctx, std::string_view op,
                                    const std::vector<std::string>& skus);

/// When any item is invalid, prints each invalid one (its line, and on standard error the
/// reason and "nothing was `done`") and returns true: a list with one invalid id is not what
/// the user meant, so nothing of it is done.
bool refuse_invalid_items(Context& ctx, const std::vector<ItemResult>& items, std::string_view done,
                          ExitFold& fold);

}  // namespace stockctl
