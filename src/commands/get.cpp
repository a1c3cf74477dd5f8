#include <algorithm>

#include "commands/batch.h"
#include "commands/context.h"
#include "commands/program.h"
#include "core/sku.h"

namespace stockctl {
namespace {

struct GetOptions {
  std::vector<std::string> skus;
};

ItemResult get_item(const Context& ctx, const std::string& sku) {
  ItemResult item;
  item.op = "get";
  item.sku = sku;
  if (std::string problem = validate_sku(sku, ctx.scheme()); !problem.empty()) {
    set_error(item, Status::invalid, problem);
  } else {
    item.key = stock_key(ctx.scheme(), sku);
  }
  return item;
}

void read_window(Context& ctx, std::vector<ItemResult>& items) {
  std::vector<Call> calls;
  calls.reserve(items.size());
  for (const ItemResult& item : items) calls.push_back(Call{nullptr, {"GET", item.key}, true});
  std::vector<CallResult> results = ctx.redis().run(calls);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const CallResult& r = results[i];
    if (r.state != CallResult::State::replied) {
      set_error(items[i], Status::error, r.error);
    } else if (r.reply.is_error()) {
      apply_error_reply(items[i], r.reply.str);
    } else {
      apply_stored_value(items[i], r.reply.string_or_nil());
    }
  }
}

ExitCode run_get(Program& program, const GetOptions& options) {
  Context ctx(program);
  std::vector<ItemResult> items;
  for (const std::string& sku : options.skus) items.push_back(get_item(ctx, sku));
  ExitFold fold;
  // Invalid input is rejected before Redis is touched.
  if (std::any_of(items.begin(), items.end(),
                  [](const ItemResult& i) { return i.status == Status::invalid; })) {
    for (const ItemResult& item : items) {
      if (item.status == Status::invalid) {
        print_error(fmt::format("item '{}': {}", item.sku, item.error));
        ctx.emit(item, fold);
      }
    }
    return fold.code();
  }
  for (std::size_t start = 0; start < items.size(); start += kWindow) {
    std::vector<ItemResult> window(
        items.begin() + static_cast<long>(start),
        items.begin() + static_cast<long>(std::min(items.size(), start + kWindow)));
    read_window(ctx, window);
    for (const ItemResult& item : window) ctx.emit(item, fold);
  }
  return fold.code();
}

}  // namespace

void setup_get(CLI::App& app, Program& program) {
  auto options = std::make_shared<GetOptions>();
  CLI::App* sub = app.add_subcommand("get", "read the current stock of one or more items");
  sub->add_option("SKU", options->skus, "item ids")->required();
  add_common_footer(*sub);
  sub->callback([&program, options] {
    program.run = [&program, options] { return run_get(program, *options); };
  });
}

}  // namespace stockctl
