#include <algorithm>

#include "cli/diagnostics.h"
#include "cli/errors.h"
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

// Reads the valid items of a window in one pipeline; invalid ones keep their status.
void read_window(Context& ctx, std::vector<ItemResult>& items) {
  std::vector<Call> calls;
  std::vector<std::size_t> read;  // positions of the items that are read
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].status == Status::invalid) continue;
    calls.push_back(Call{nullptr, {"GET", items[i].key}, true});
    read.push_back(i);
  }
  if (calls.empty()) return;
  std::vector<CallResult> results = ctx.redis().run(calls);
  for (std::size_t j = 0; j < read.size(); ++j) {
    ItemResult& item = items[read[j]];
    const CallResult& r = results[j];
    if (r.state != CallResult::State::replied) {
      set_error(item, Status::error, r.error);
    } else if (r.reply.is_error()) {
      apply_error_reply(item, r.reply.str);
    } else {
      apply_stored_value(item, r.reply.string_or_nil());
    }
  }
}

// Every SKU gets its line, in input order, invalid ones included; problems are echoed on
// standard error as deduct does.
ExitCode run_get(Program& program, const GetOptions& options) {
  if (options.skus.empty()) throw InputError("get needs at least one SKU");
  Context ctx(program);
  ExitFold fold;
  ItemErrorEcho echo;
  for (std::size_t start = 0; start < options.skus.size(); start += kWindow) {
    std::size_t end = std::min(options.skus.size(), start + kWindow);
    std::vector<ItemResult> window;
    window.reserve(end - start);
    for (std::size_t i = start; i < end; ++i) window.push_back(get_item(ctx, options.skus[i]));
    read_window(ctx, window);
    for (const ItemResult& item : window) {
      if (needs_error_line(item.status)) echo.add(item.sku, item.error);
      ctx.emit(item, fold);
    }
  }
  return fold.code();
}

}  // namespace

void setup_get(CLI::App& app, Program& program) {
  auto options = std::make_shared<GetOptions>();
  CLI::App* sub = app.add_subcommand("get", "read the current stock of one or more items");
  sub->add_option("SKU", options->skus, "item ids");
  add_common_footer(*sub);
  sub->callback([&program, options] {
    program.run = [&program, options] { return run_get(program, *options); };
  });
}

}  // namespace stockctl
