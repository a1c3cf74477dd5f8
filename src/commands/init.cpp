#include <fmt/format.h>

#include <chrono>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "bulk/stock_file_run.h"
#include "bulk/store_runner.h"
#include "cli/common_options.h"
#include "commands/program.h"
#include "core/quantity.h"

namespace stockctl {
namespace {

struct InitOptions {
  std::string sku;
  std::string value;
  SourceOptions source;
  bool force = false;
  bool dry_run = false;
  long long ttl_s = 0;
};

ExitCode run_init_single(Context& ctx, const InitOptions& o) {
  if (o.sku.empty() && o.value.empty())
    throw InputError("init needs SKU and VALUE, --file FILE or --from-cmd CMD");
  if (o.value.empty()) throw InputError(fmt::format("init {}: VALUE is missing", o.sku));
  PutItem item;
  item.result.op = "init";
  item.result.sku = o.sku;
  ParsedNumber value = parse_stock_value(o.value);
  ExitFold fold;
  if (std::string problem = accept_sku(item.result.sku, ctx.scheme()); !problem.empty()) {
    set_error(item.result, Status::invalid, problem);
  } else if (!value.ok()) {
    item.result.key = stock_key(ctx.scheme(), item.result.sku);
    set_error(item.result, Status::invalid, fmt::format("VALUE {}", value.error));
  } else {
    item.result.key = stock_key(ctx.scheme(), item.result.sku);
    item.value = value.value;
    std::vector<PutItem> items{item};
    ctx.on_unconnected({item.result}, true);
    PutRunner runner(ctx.redis(), PutMode::for_init().with_force(o.force), o.ttl_s, LockTiming{});
    runner.set_change_log(ctx.change_log(), "init");
    runner.set_key_scheme(ctx.scheme());
    runner.run(items);
    item = items[0];
  }
  if (needs_error_line(item.result.status)) {
    ItemErrorEcho echo;
    echo.add(item.result.sku, item.result.error);
  }
  ctx.emit(item.result, fold);
  return fold.code();
}

ExitCode run_init(Program& program, const InitOptions& o) {
  Context ctx(program);
  if (!has_source(o.source)) {
    if (o.dry_run) {
      throw InputError(
          "init --dry-run needs a source (--file or --from-cmd); for one item, 'stockctl get "
          "SKU' shows what it holds");
    }
    // Taken silently, it would leave a cron job's report never written.
    if (!o.source.report.empty()) {
      throw InputError(
          "init --report needs a source (--file or --from-cmd); one item's answer is its line "
          "on standard output");
    }
    return run_init_single(ctx, o);
  }
  if (!o.sku.empty() || !o.value.empty())
    throw InputError("init: give SKU VALUE or a source (--file, --from-cmd), not both");
  StockFileRun run(ctx,
                   StockFileOptions{"init", o.source,
                                    PutMode::for_init().with_force(o.force).with_dry_run(o.dry_run),
                                    o.ttl_s, LockTiming{}, false});
  run.validate();
  return run.write();
}

}  // namespace

void setup_init(CLI::App& app, Program& program) {
  auto o = std::make_shared<InitOptions>();
  CLI::App* sub = app.add_subcommand(
      "init", "set stock explicitly (missing keys only, unless --force): one item or a file");
  sub->add_option("SKU", o->sku, "item id");
  sub->add_option("VALUE", o->value, "stock: 0 to 9007199254740991, or -1 / unlimited");
  sub->add_flag("--force", o->force, "overwrite existing keys");
  sub->add_flag("--dry-run", o->dry_run,
                "write nothing; report what would happen (with --file or --from-cmd)");
  sub->add_option(
         "--ttl", o->ttl_s,
         "expiry in seconds of the keys written (default none; 0 is the same as leaving it out)")
      ->check(integer_range(0, 1LL << 40));
  add_source_options(*sub, o->source, true, true);
  add_from_cmd_options(*sub, o->source);
  add_common_footer(*sub);
  sub->callback([&program, o] { program.run = [&program, o] { return run_init(program, *o); }; });
}

}  // namespace stockctl
