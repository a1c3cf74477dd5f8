#include <fmt/format.h>

#include <algorithm>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "bulk/stock_file_run.h"
#include "cli/common_options.h"
#include "commands/program.h"
#include "core/sku.h"
#include "lock/init_lock.h"
#include "lock/run_lock.h"

namespace stockctl {
namespace {

struct RebuildOptions {
  SourceOptions source;
  bool force = false;
  bool dry_run = false;
  bool fail_on_drift = false;
  bool extra = false;
  long long ttl_s = 0;
  LockTiming lock;
};

ExitCode run_rebuild(Program& program, const RebuildOptions& o) {
  if (!has_source(o.source)) throw InputError("rebuild needs --file FILE or --from-cmd CMD");
  Context ctx(program);
  StockFileRun run(
      ctx, StockFileOptions{"rebuild", o.source,
                            PutMode::for_rebuild().with_force(o.force).with_dry_run(o.dry_run),
                            o.ttl_s, o.lock, o.fail_on_drift, o.extra});
  const std::size_t rows = run.validate();
  Client* client = ctx.redis_or_null();
  // A dry run writes nothing, a source without rows neither, and without a connection every
  // row is reported not applied: none of them needs the lock.
  if (o.dry_run || rows == 0 || !client) return run.write();
  // The lock must outlive a window even on a slow server; it is renewed between windows.
  RunLock lock(*client, rebuild_lock_key(ctx.scheme()), std::max<long long>(o.lock.ttl_ms, 30000));
  bool taken = false;
  try {
    taken = lock.take();
  } catch (const StockctlError& e) {
    // NOPERM, or no answer: the summary is still printed, as for a busy lock.
    return run.failed(
        fmt::format("cannot take the rebuild lock: {}; nothing was written", e.what()));
  }
  if (!taken) {
    return run.busy(fmt::format("another rebuild is running on this prefix: {}",
                                describe_held_lock(*client, lock.key())));
  }
  return run.write([&lock] { lock.renew(); });
}

}  // namespace

void setup_rebuild(CLI::App& app, Program& program) {
  auto o = std::make_shared<RebuildOptions>();
  CLI::App* sub = app.add_subcommand(
      "rebuild", "recover after cache loss: re-create missing keys from a database export");
  sub->add_flag("--force", o->force, "overwrite live keys too");
  sub->add_flag("--dry-run", o->dry_run, "write nothing; report what would happen");
  sub->add_flag("--fail-on-drift", o->fail_on_drift,
                "exit 6 when a live key differs from the export");
  sub->add_flag("--extra", o->extra,
                "also report items Redis holds and the source lacks (status extra; changes "
                "nothing)");
  sub->add_option(
         "--ttl", o->ttl_s,
         "expiry in seconds of the keys written (default none; 0 is the same as leaving it out)")
      ->check(integer_range(0, 1LL << 40));
  sub->add_option("--lock-ttl", o->lock.ttl_ms, "lock lifetime in ms (default 10000)")
      ->check(integer_range(1, 86400000LL));
  sub->add_option("--lock-wait", o->lock.wait_ms,
                  "longest wait in ms for an item's init lock (default 5000)")
      ->check(integer_range(0, 86400000LL));
  add_source_options(*sub, o->source, true, true);
  add_from_cmd_options(*sub, o->source);
  add_common_footer(*sub);
  sub->callback(
      [&program, o] { program.run = [&program, o] { return run_rebuild(program, *o); }; });
}

}  // namespace stockctl
