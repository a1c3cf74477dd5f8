// `rebalance SKU...`: even out split items' buckets now, while sales go on (docs/split.md,
// "Moving units between buckets"; the engine is bulk/split_rebalance).

#include <fmt/format.h>

#include "app/context.h"
#include "app/item_list.h"
#include "base/diagnostics.h"
#include "bulk/split_rebalance.h"
#include "bulk/split_runner.h"
#include "cli/common_options.h"
#include "commands/program.h"

namespace stockctl {
namespace {

struct RebalanceOptions {
  std::vector<std::string> skus;
};

ExitCode run_rebalance(Program& program, const RebalanceOptions& o) {
  Context ctx(program);
  std::vector<ItemResult> items = named_items(ctx, "rebalance", o.skus);
  ExitFold fold;
  if (refuse_invalid_items(ctx, items, "moved", fold)) return fold.code();
  ctx.on_unconnected(items, true);
  SplitRebalance rebalance(ctx.redis(), read_slot_ranges(ctx.redis(), program.common.cluster),
                           ctx.change_log());
  for (ItemResult& item : items) {
    rebalance.run(item);
    if (item.status == Status::error)
      print_error(fmt::format("item '{}': {}", item.sku, item.error));
    ctx.emit(item, fold);
  }
  return fold.code();
}

}  // namespace

void setup_rebalance(CLI::App& app, Program& program) {
  auto o = std::make_shared<RebalanceOptions>();
  CLI::App* sub = app.add_subcommand(
      "rebalance",
      "even out split items' buckets now, while sales go on: each bucket's surplus moves to the "
      "emptiest (\"moved\": the units moved); every move is recorded, so a crash loses none");
  sub->add_option("SKU", o->skus, "item ids")->required();
  add_common_footer(*sub);
  sub->callback(
      [&program, o] { program.run = [&program, o] { return run_rebalance(program, *o); }; });
}

}  // namespace stockctl
