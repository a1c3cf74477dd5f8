// hold, order, confirm, release, cancel, reap: one Redis runs each cart as one script; a
// cluster runs the protocol of docs/holds.md (holds/cart_protocol).

#include "holds/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "app/context.h"
#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "base/text.h"
#include "core/exit_fold.h"
#include "core/sku.h"
#include "holds/cart_protocol.h"
#include "holds/cluster_settle.h"
#include "holds/hold_runner.h"
#include "holds/one_redis.h"

namespace stockctl {

namespace {

/// Holds or orders from --file sent per pipelined window (one Redis).
constexpr std::size_t kHoldWindow = 64;

// Prints the cart's answer (and, unless `echo` is false, its error line on stderr), counts it
// for --metrics-file and folds its status into the exit status.
void print_cart(Context& ctx, CartKind kind, const Cart& cart, ExitFold& fold, bool echo = true) {
  if (echo && needs_error_line(cart.status) && !cart.error.empty()) {
    print_error(fmt::format("{} {}: {}", kind_name(kind), shown_value(cart.id), cart.error));
  }
  ctx.out().write(cart_json(kind, cart));
  ctx.count(cart.status);
  fold.add(cart.status);
}

// Once nothing more is to be sent (SIGINT or SIGTERM, or on a cluster a step no replica
// acknowledged), every cart from `from` on that would have been is reported as not applied for
// `why` (a cart is all or nothing, so none of its lines was held); after a signal main turns the
// exit status into 130 or 143. As deduct --file does, each unsent cart gets its answer line but
// no error line of its own: one line on stderr says why and how many.
void report_unsent(Context& ctx, CartKind kind, std::vector<Cart>& carts, std::size_t from,
                   const std::string& why, ExitFold& fold) {
  std::size_t unsent = 0;
  for (std::size_t i = from; i < carts.size(); ++i) {
    const bool sendable = carts[i].status == Status::ok;
    if (sendable) {
      fail(carts[i], Status::error, "not applied: " + why);
      ++unsent;
    }
    print_cart(ctx, kind, carts[i], fold, !sendable);
  }
  print_error(fmt::format("{}: {} {}s were not sent (reported as not applied)", why, unsent,
                          kind_name(kind)));
}

// One cart after the other: each runs the protocol's steps in order, and a stop is obeyed
// between carts, never inside one (its steps finish or are left to a re-run and reap). A step
// fewer replicas than --wait-replicas acknowledged fails its cart and stops the run there.
ExitCode hold_on_cluster(Context& ctx, CartKind kind, const HoldOptions& o,
                         std::vector<Cart>& carts) {
  CartStore store{ctx.redis(), ctx.scheme(), ctx.change_log()};
  CartProtocol protocol(store, kind, o, hooks_from_environment());
  ExitFold fold;
  for (std::size_t i = 0; i < carts.size(); ++i) {
    if (interrupted()) {
      report_unsent(ctx, kind, carts, i, interrupt_reason(), fold);
      break;
    }
    if (carts[i].status != Status::ok) {
      print_cart(ctx, kind, carts[i], fold);
      continue;
    }
    try {
      protocol.run(carts[i]);
    } catch (const NotDurableError& e) {
      fail(carts[i], Status::error, e.what());
      print_cart(ctx, kind, carts[i], fold);
      if (i + 1 < carts.size()) {
        report_unsent(
            ctx, kind, carts, i + 1,
            fmt::format("stopped after {} {}", kind_name(kind), escape_control(carts[i].id)), fold);
      }
      break;
    }
    print_cart(ctx, kind, carts[i], fold);
  }
  return fold.code();
}

// Checks every id before anything is written, as delete does: one invalid id and the list was
// not what the user meant, so nothing is settled (exit 2). Each invalid id gets its line; returns
// whether there was one.
bool report_invalid_ids(Context& ctx, const std::string& action,
                        const std::vector<std::string>& ids, ExitFold& fold) {
  bool invalid = false;
  const char* done = action == "confirm"   ? "confirmed"
                     : action == "release" ? "released"
                                           : "cancelled";
  for (const std::string& id : ids) {
    std::string problem = validate_hold_id(id);
    if (problem.empty()) continue;
    invalid = true;
    print_error(fmt::format("{} {}: {}; nothing was {}", action, shown_value(id), problem, done));
    ctx.out().write(settle_json(action, id, Status::invalid, {}, {}, false, problem));
    ctx.count(Status::invalid);
    fold.add(Status::invalid);
  }
  return invalid;
}

}  // namespace

ExitCode run_holds(Program& program, CartKind kind, HoldOptions& o) {
  validate_init_source(o.init);
  o.init.format = o.source.format;
  check_init_file(o.init, o.source.file);
  Context ctx(program);
  const bool from_file = !o.source.file.empty();
  if (from_file && (o.id_given || !o.lines.empty())) {
    throw InputError(fmt::format("{}: give ID SKU=QTY... or --file, not both", kind_name(kind)));
  }
  if (!from_file && !o.id_given) {
    throw InputError(fmt::format("{} needs ID SKU=QTY..., or --file FILE", kind_name(kind)));
  }
  if (o.source.skip_invalid) {
    throw InputError(fmt::format("{}: --skip-invalid does not apply: a cart is all or nothing",
                                 kind_name(kind)));
  }
  std::vector<Cart> carts;
  try {
    carts = from_file ? carts_from_file(o, ctx.scheme()) : carts_from_words(o, ctx.scheme());
  } catch (const InvalidCarts& e) {
    // Every invalid row still gets its line; the refusal decides the exit status (2).
    for (const Cart& bad : e.refused()) {
      ctx.out().write(cart_json(kind, bad));
      ctx.count(Status::invalid);
    }
    ctx.out().flush();
    throw;
  }
  ExitFold fold;
  if (!from_file && carts[0].status == Status::invalid) {
    print_error(fmt::format("{} {}: {}; nothing was {}", kind_name(kind), shown_value(carts[0].id),
                            carts[0].error, kind == CartKind::hold ? "held" : "ordered"));
    ctx.out().write(cart_json(kind, carts[0]));
    ctx.count(Status::invalid);
    fold.add(Status::invalid);
    return fold.code();
  }
  ctx.on_unconnected([&ctx, kind, &carts](const std::string& reason) {
    ExitFold unused;  // the connection error that ends the run decides the exit status
    for (Cart& cart : carts) {
      const bool sendable = cart.status == Status::ok;
      if (sendable) fail(cart, Status::error, "not applied: " + reason);
      print_cart(ctx, kind, cart, unused, !sendable);
    }
  });
  if (program.common.cluster) return hold_on_cluster(ctx, kind, o, carts);
  CartStore store{ctx.redis(), ctx.scheme(), ctx.change_log()};
  HoldRunner runner(store, kind, o, o.expire_s * 1000);
  runner.require_acks();
  for (std::size_t start = 0; start < carts.size(); start += kHoldWindow) {
    if (interrupted()) {
      report_unsent(ctx, kind, carts, start, interrupt_reason(), fold);
      break;
    }
    std::vector<Cart> window(
        carts.begin() + static_cast<std::ptrdiff_t>(start),
        carts.begin() + static_cast<std::ptrdiff_t>(std::min(carts.size(), start + kHoldWindow)));
    runner.run(window);
    for (const Cart& cart : window) print_cart(ctx, kind, cart, fold);
  }
  return fold.code();
}

ExitCode run_settles(Program& program, const std::string& action,
                     const std::vector<std::string>& given) {
  Context ctx(program);
  if (given.empty()) throw InputError(fmt::format("{} needs ID...", action));
  // --trim takes the white space around an id away, as around a SKU or a request id.
  std::vector<std::string> ids = given;
  if (ctx.scheme().trim_skus) {
    for (std::string& id : ids) id = std::string(trim_white_space(id));
  }
  ExitFold fold;
  if (report_invalid_ids(ctx, action, ids, fold)) return fold.code();
  ctx.on_unconnected([&ctx, &action, &ids](const std::string& reason) {
    for (const std::string& id : ids) {
      ctx.out().write(
          settle_json(action, id, Status::error, {}, {}, false, "not applied: " + reason));
      ctx.count(Status::error);
    }
  });
  CartStore store{ctx.redis(), ctx.scheme(), ctx.change_log()};
  const ProtocolHooks hooks = hooks_from_environment();
  for (const std::string& id : ids) {
    Settled settled;
    if (program.common.cluster) {
      try {
        settled = settle_on_cluster(store, action, id, hooks);
      } catch (const NotDurableError& e) {
        settled = Settled{Status::error, {}, {}, false, e.what(), {}};
      }
    } else {
      settled = settle_on_one_redis(store, action, id);
    }
    print_settle(ctx, action, id, settled, fold);
  }
  return fold.code();
}
ExitCode run_reap(Program& program) {
  Context ctx(program);
  CartStore store{ctx.redis(), ctx.scheme(), ctx.change_log()};
  // Items on a cluster hold units only in the protocol's groups, which the records drive.
  return print_reap(ctx,
                    program.common.cluster ? reap_on_cluster(store) : reap_on_one_redis(store));
}

}  // namespace stockctl
