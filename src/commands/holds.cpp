// `hold`, `order`, `confirm`, `release`, `cancel`, `reap`: their options and entry points (the
// engine is in holds/); and the read of an item's held units that delete uses.

#include "commands/holds.h"
#include "cli/common_options.h"

#include <fmt/format.h>

#include <memory>
#include <optional>

#include "commands/program.h"
#include "core/error_reply.h"
#include "core/outcome.h"
#include "core/sku.h"
#include "holds/run.h"
#include "redis/errors.h"
#include "redis/scripts/held.h"

namespace stockctl {

std::int64_t held_units(Client& client, const std::string& stock_key) {
  CallResult result;
  result.state = CallResult::State::replied;
  result.reply = client.call(held_view_call(stock_key));
  const std::optional<HeldView> view = held_view_from(result);
  if (!view) {
    throw ConnectionError(
        result.reply.is_error()
            ? fmt::format("cannot read the item's holds: {}",
                          error_on(stock_key, result.reply.str, items_prefix_of(stock_key)))
            : fmt::format("cannot read the holds of {}: {}", stock_key,
                          describe_reply(result.reply)));
  }
  return view->held;
}

namespace {

struct SettleOptions {
  std::vector<std::string> ids;
};

void add_hold_command(CLI::App& app, Program& program, CartKind kind, const std::string& about) {
  auto o = std::make_shared<HoldOptions>();
  CLI::App* sub = app.add_subcommand(kind_name(kind), about);
  sub->add_option("ID", o->id,
                  "the id of the hold or order (an idempotency key; at most 256 bytes, no '=' "
                  "and no control characters)")
      ->each([o](const std::string&) { o->id_given = true; });
  sub->add_option("LINES", o->lines, "SKU=QTY lines (same SKU twice: merged)");
  if (kind == CartKind::hold) {
    sub->add_option("--expire", o->expire_s, "seconds until the hold expires (default 600)")
        ->type_name("SECONDS")
        ->check(integer_range(1, kMaxExpireS));
  }
  sub->add_option("--request-ttl", o->request_ttl_s,
                  "how long the id is remembered, in seconds (default 86400)")
      ->check(integer_range(1, 1LL << 32))
      ->group("Retries");
  const char* init = "Initialization of a missing key";
  sub->add_option("--init-value", o->init.value, "initial stock of a missing item (or unlimited)")
      ->group(init);
  sub->add_option("--init-from", o->init.file,
                  "take a missing item's initial stock from its row in FILE")
      ->check(readable_file())
      ->group(init);
  sub->add_option("--init-cmd", o->init.command,
                  "run CMD (sh -c, SKU in $STOCKCTL_SKU) under the init lock; its output is the "
                  "initial stock")
      ->group(init);
  sub->add_option("--ttl", o->ttl_s,
                  "expiry in seconds of keys this call creates (default none; 0 is the same as "
                  "leaving it out)")
      ->check(integer_range(0, 1LL << 40))
      ->group(init);
  sub->add_option("--lock-ttl", o->lock.ttl_ms, "init lock lifetime in ms (default 10000)")
      ->check(integer_range(1, 86400000LL))
      ->group(init);
  sub->add_option("--lock-wait", o->lock.wait_ms,
                  "longest wait for the init lock in ms (default 5000)")
      ->check(integer_range(0, 86400000LL))
      ->group(init);
  add_source_options(*sub, o->source, false, false);
  // A cart's id is read where a batch row's request id is (holds/cart: carts_from_file).
  o->source.columns.request_id = "id";
  sub->add_option("--id-column", o->source.columns.request_id,
                  "column holding the id of the hold or order (default id)")
      ->group("Source");
  // A cart is all or nothing: --skip-invalid has no meaning here, so it is not offered.
  sub->remove_option(sub->get_option("--skip-invalid"));
  add_common_footer(*sub);
  sub->callback([&program, o, kind] {
    program.run = [&program, o, kind] { return run_holds(program, kind, *o); };
  });
}

void add_settle_command(CLI::App& app, Program& program, const std::string& action,
                        const std::string& about) {
  auto o = std::make_shared<SettleOptions>();
  CLI::App* sub = app.add_subcommand(action, about);
  sub->add_option("ID", o->ids, "ids of holds or orders; one invalid id settles none");
  add_common_footer(*sub);
  sub->callback([&program, o, action] {
    program.run = [&program, o, action] { return run_settles(program, action, o->ids); };
  });
}

}  // namespace

void setup_holds(CLI::App& app, Program& program) {
  add_hold_command(app, program, CartKind::hold,
                   "reserve several items all-or-nothing until confirmed, released or expired");
  add_settle_command(app, program, "confirm", "turn holds into sales");
  add_settle_command(app, program, "release", "give holds' units back to stock");
  add_hold_command(app, program, CartKind::order,
                   "deduct several items all-or-nothing (a cart checkout), once per id");
  add_settle_command(app, program, "cancel",
                     "give a confirmed order's or hold's units back, exactly once");
  CLI::App* reap = app.add_subcommand("reap", "give back the units of every expired hold now");
  add_common_footer(*reap);
  reap->callback([&program] { program.run = [&program] { return run_reap(program); }; });
}

}  // namespace stockctl
