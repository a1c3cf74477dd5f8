#include <fmt/format.h>

#include <chrono>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "bulk/stock_file_run.h"
#include "commands/program.h"
#include "core/sku.h"
#include "redis/client.h"

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

/// Another rebuild of the same prefix holds the run-wide lock.
class RebuildBusy : public BusyError {
 public:
  explicit RebuildBusy(const std::string& message) : BusyError(message) {}
};

// Holds the run-wide rebuild lock: taken before the first write, extended before each window,
// released at the end.
class RunLock {
 public:
  RunLock(Client& client, std::string key, long long ttl_ms)
      : client_(client), key_(std::move(key)), token_(random_token()), ttl_ms_(ttl_ms) {}
  ~RunLock() {
    if (held_) release_lock(client_, key_, token_);
  }
  /// Takes the lock, or extends it once a third of its lifetime has passed (a synchronous round
  /// trip per window would stall the pipeline).
  void renew() {
    const auto now = std::chrono::steady_clock::now();
    if (held_ && now - renewed_ < std::chrono::milliseconds(ttl_ms_ / 3)) return;
    if (!held_) {
      Reply r =
          client_.call(Call::once({"SET", key_, token_, "NX", "PX", std::to_string(ttl_ms_)}));
      if (r.is_error()) throw StockctlError(fmt::format("{}: {}", key_, r.str));
      if (r.is_nil()) {
        throw RebuildBusy(
            fmt::format("another rebuild is running on this prefix (lock {} is held)", key_));
      }
      held_ = true;
    } else if (!extend_lock(client_, key_, token_, ttl_ms_)) {
      throw StockctlError(fmt::format("lost the rebuild lock {}; stopped", key_));
    }
    renewed_ = now;
  }

 private:
  Client& client_;
  std::string key_;
  std::string token_;
  long long ttl_ms_;
  bool held_ = false;
  std::chrono::steady_clock::time_point renewed_;
};

ExitCode run_rebuild(Program& program, const RebuildOptions& o) {
  if (!has_source(o.source)) throw InputError("rebuild needs --file FILE or --from-cmd CMD");
  Context ctx(program);
  StockFileRun run{
      "rebuild", o.source, PutMode::for_rebuild().with_force(o.force).with_dry_run(o.dry_run),
      o.ttl_s,   o.lock,   o.fail_on_drift,
      o.extra};
  if (o.dry_run) return run_stock_file(ctx, run);
  // The lock must outlive a window even on a slow server; it is renewed between windows.
  long long run_lock_ttl = std::max<long long>(o.lock.ttl_ms, 30000);
  std::unique_ptr<RunLock> lock;
  try {
    return run_stock_file(ctx, run, [&] {
      if (!lock)
        lock = std::make_unique<RunLock>(ctx.redis(), rebuild_lock_key(ctx.scheme()), run_lock_ttl);
      lock->renew();
    });
  } catch (const RebuildBusy& e) {
    print_error(e.what());
    Summary summary;
    summary.op = "rebuild";
    summary.source = !o.source.from_cmd.empty() ? "<from-cmd>"
                     : o.source.file == "-"     ? "<stdin>"
                                                : o.source.file;
    summary.status = "busy";
    summary.error = e.what();
    ctx.out().write(summary_json(summary));
    return ExitCode::busy;
  }
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
  sub->add_option("--ttl", o->ttl_s, "expiry in seconds of the keys written (default none)")
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
