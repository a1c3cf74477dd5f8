#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/context.h"

namespace stockctl {

/// One item found by a scan: its stock key and its SKU.
struct ScannedItem {
  std::string key;
  std::string sku;
};

/// Walks every item under the prefix whose SKU matches the glob `match`, on every primary, with
/// SCAN (`count` keys per round trip), and hands each batch of items to `each`. Companion keys
/// and keys of other layouts are never items. Throws ConnectionError when a node cannot be read.
void scan_items(Context& ctx, const std::string& match, long long count,
                const std::function<void(std::vector<ScannedItem>&)>& each);

}  // namespace stockctl
