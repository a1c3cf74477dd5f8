#include "commands/deduct_add.h"

#include <fmt/format.h>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "bulk/adjust_file_run.h"
#include "bulk/split_adjust.h"
#include "cli/common_options.h"
#include "core/quantity.h"

namespace stockctl {
namespace {

struct OpCommandOptions {
  OpOptions op;
  SourceOptions source;
  std::string sku;
  std::string qty;
};

// The init source, --ttl, --request-id and lock options of deduct and add.
void add_op_options(CLI::App& app, OpOptions& o) {
  const char* init = "Initialization of a missing key";
  app.add_option("--init-value", o.init.value, "initial stock of a missing key (or unlimited)")
      ->group(init);
  app.add_option("--init-from", o.init.file,
                 "take a missing key's initial stock from its row in FILE")
      ->check(readable_file())
      ->group(init);
  app.add_option("--init-cmd", o.init.command,
                 "run CMD (sh -c, SKU in $STOCKCTL_SKU) under the init lock; its output is the "
                 "initial stock")
      ->group(init);
  app.add_option("--request-id", o.request_id,
                 "apply at most once per item and ID; a repeat returns the first answer")
      ->each([&o](const std::string&) { o.request_id_given = true; })
      ->group("Retries");
  app.add_option("--request-ttl", o.request_ttl_s,
                 "how long a request id is remembered, in seconds (default 86400)")
      ->check(integer_range(1, 1LL << 32))
      ->group("Retries");
  app.add_option("--ttl", o.ttl_s,
                 "expiry in seconds of keys this call creates (default none; 0 is the same as "
                 "leaving it out)")
      ->check(integer_range(0, 1LL << 40))
      ->group(init);
  app.add_option("--lock-ttl", o.lock.ttl_ms, "init lock lifetime in ms (default 10000)")
      ->check(integer_range(1, 86400000LL))
      ->group(init);
  app.add_option("--lock-wait", o.lock.wait_ms,
                 "longest wait for the init lock in ms (default 5000)")
      ->check(integer_range(0, 86400000LL))
      ->group(init);
}

ExitCode run_single(Context& ctx, OpRunner::Op op, const std::string& name,
                    const OpCommandOptions& o) {
  if (o.sku.empty() && o.qty.empty()) {
    throw InputError(fmt::format("{} needs SKU and QTY, or --file FILE", name));
  }
  if (o.qty.empty()) throw InputError(fmt::format("{} {}: QTY is missing", name, o.sku));
  std::string sku = o.sku;
  const std::string sku_problem = accept_sku(sku, ctx.scheme());
  ItemResult item = adjust_item(name, ctx.scheme(), sku, sku_problem.empty());
  item.request_id =
      ctx.scheme().trim_skus ? std::string(trim_white_space(o.op.request_id)) : o.op.request_id;
  ParsedNumber qty = parse_qty(o.qty);
  ExitFold fold;
  // Invalid input is reported before Redis is touched.
  if (!sku_problem.empty()) {
    set_error(item, Status::invalid, sku_problem);
  } else if (o.op.request_id_given && !validate_request_id(item.request_id).empty()) {
    // An empty id (an unset $ORDER_ID) is refused: taken as "no id", every retry would apply.
    set_error(item, Status::invalid, validate_request_id(item.request_id));
  } else if (!qty.ok()) {
    set_error(item, Status::invalid, fmt::format("QTY {}", qty.error));
  } else {
    item.qty = qty.value;
    std::vector<ItemResult> items{item};
    ctx.on_unconnected(items, true);
    OpRunner runner(ctx.redis(), op, o.op, ctx.scheme());
    runner.set_change_log(ctx.change_log());
    runner.run(items);
    item = items[0];
    // A split item's stock key holds its layout record, which the stock script refuses: only
    // then is the item read again (an item that is not split pays nothing for split ones).
    apply_to_split_item(ctx.redis(), runner, op, o.op, ctx.change_log(), item);
  }
  ItemErrorEcho echo;
  emit_checked(ctx, item, fold, echo);
  return fold.code();
}

ExitCode run_batch(Context& ctx, OpRunner::Op op, const std::string& name,
                   const OpCommandOptions& o) {
  if (!o.sku.empty() || !o.qty.empty())
    throw InputError(fmt::format("{}: give SKU QTY or --file, not both", name));
  if (o.op.request_id_given) {
    throw InputError(
        fmt::format("{}: --request-id is for one item; with --file, each row's id comes from its "
                    "'{}' column",
                    name, o.source.columns.request_id));
  }
  return run_adjust_file(ctx, op, name, o.op, o.source);
}

ExitCode run_op_command(Program& program, OpCommandOptions& o, OpRunner::Op op,
                        const std::string& name) {
  validate_init_source(o.op.init);
  o.op.init.format = o.source.format;
  o.op.init.columns = o.source.columns;
  check_init_file(o.op.init, o.source.file);
  Context ctx(program);
  if (o.source.file.empty()) return run_single(ctx, op, name, o);
  return run_batch(ctx, op, name, o);
}

}  // namespace

void setup_op_command(CLI::App& app, Program& program, OpRunner::Op op, const std::string& name,
                      const std::string& description) {
  auto o = std::make_shared<OpCommandOptions>();
  CLI::App* sub = app.add_subcommand(name, description);
  sub->add_option("SKU", o->sku, "item id");
  sub->add_option("QTY", o->qty, "quantity, 1 to 9007199254740991");
  add_op_options(*sub, o->op);
  add_source_options(*sub, o->source, false, false);
  sub->add_option("--request-id-column", o->source.columns.request_id,
                  "column holding each row's request id (default request_id; when named, the "
                  "source must have it)")
      ->each([o](const std::string&) { o->source.columns.request_id_required = true; })
      ->needs(sub->get_option("--file"))
      ->group("Source");
  add_common_footer(*sub);
  sub->callback([&program, o, op, name] {
    program.run = [&program, o, op, name] { return run_op_command(program, *o, op, name); };
  });
}

}  // namespace stockctl
