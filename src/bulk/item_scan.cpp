#include "bulk/item_scan.h"

#include <fmt/format.h>

#include "core/sku.h"
#include "redis/errors.h"

namespace stockctl {
namespace {

// The prefix matches only itself; the glob applies to the SKU inside the braces the stock key
// puts around it.
std::string scan_pattern(const KeyScheme& scheme, const std::string& match) {
  std::string pattern = escape_glob(scheme.prefix);
  if (scheme.hashtag) return pattern + "{" + match + "}";
  return pattern + match;
}

void scan_node(Context& ctx, const std::string& node, const std::string& pattern, long long count,
               const std::function<void(std::vector<ScannedItem>&)>& each) {
  std::string cursor = "0";
  std::vector<ScannedItem> batch;
  do {
    Reply reply = ctx.redis().call_on(
        node, Call::read({"SCAN", cursor, "MATCH", pattern, "COUNT", std::to_string(count)}));
    if (reply.is_error() || reply.elements.size() != 2) {
      throw ConnectionError(
          fmt::format("SCAN on {}: {}", node.empty() ? "the server" : node, describe_reply(reply)));
    }
    cursor = reply.elements[0].str;
    batch.clear();
    for (Reply& key : reply.elements[1].elements) {
      if (auto sku = sku_of_key(ctx.scheme(), key.str)) {
        batch.push_back(ScannedItem{std::move(key.str), std::move(*sku)});
      }
    }
    if (!batch.empty()) each(batch);
  } while (cursor != "0");
}

}  // namespace

void scan_items(Context& ctx, const std::string& match, long long count,
                const std::function<void(std::vector<ScannedItem>&)>& each) {
  const std::string pattern = scan_pattern(ctx.scheme(), match);
  for (const std::string& node : ctx.redis().primaries())
    scan_node(ctx, node, pattern, count, each);
}

}  // namespace stockctl
