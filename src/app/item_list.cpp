#include "app/item_list.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/diagnostics.h"
#include "core/sku.h"

namespace stockctl {

std::vector<ItemResult> named_items(const Context& ctx, std::string_view op,
                                    const std::vector<std::string>& skus) {
  std::vector<ItemResult> items;
  items.reserve(skus.size());
  for (const std::string& sku : skus) {
    ItemResult item;
    item.op = std::string(op);
    item.sku = sku;
    if (std::string problem = accept_sku(item.sku, ctx.scheme()); !problem.empty()) {
      set_error(item, Status::invalid, problem);
    } else {
      item.key = stock_key(ctx.scheme(), item.sku);
    }
    items.push_back(std::move(item));
  }
  return items;
}

bool refuse_invalid_items(Context& ctx, const std::vector<ItemResult>& items, std::string_view done,
                          ExitFold& fold) {
  auto invalid = [](const ItemResult& item) { return item.status == Status::invalid; };
  if (std::none_of(items.begin(), items.end(), invalid)) return false;
  for (const ItemResult& item : items) {
    if (!invalid(item)) continue;
    print_error(fmt::format("item '{}': {}; nothing was {}", item.sku, item.error, done));
    ctx.emit(item, fold);
  }
  return true;
}

}  // namespace stockctl
