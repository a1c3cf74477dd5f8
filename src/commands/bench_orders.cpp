// `stockctl bench --mode order` on Redis Cluster: carts through the two-phase protocol of
// docs/holds.md, with the cost per cart reported by how many slot groups each cart spans.

#include "commands/bench_orders.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string_view>
#include <thread>

#include "app/context.h"
#include "base/errors.h"
#include "commands/bench_items.h"
#include "core/cart_spread.h"
#include "core/quantity.h"
#include "core/sku.h"
#include "holds/cart.h"
#include "holds/cart_protocol.h"
#include "lock/init_lock.h"
#include "output/progress.h"

namespace stockctl {
namespace {

using Clock = std::chrono::steady_clock;

/// Three test items in one hash slot: a cart spans as many slot groups as triples it uses.
struct Triple {
  int slot = 0;
  std::vector<std::string> skus;
};

// Counts up SKU names RUN-0, RUN-1, ... and keeps the first three found in each slot, until
// `wanted` slots have three (each slot used by one triple only).
std::vector<Triple> find_triples(const KeyScheme& scheme, const std::string& run,
                                 std::size_t wanted) {
  std::map<int, std::vector<std::string>> by_slot;
  std::vector<Triple> triples;
  for (long n = 0; triples.size() < wanted; ++n) {
    std::string sku = fmt::format("{}-{}", run, n);
    const int slot = cart_slot(stock_key(scheme, sku));
    std::vector<std::string>& skus = by_slot[slot];
    if (skus.size() >= 3) continue;
    skus.push_back(std::move(sku));
    if (skus.size() == 3) triples.push_back(Triple{slot, skus});
  }
  return triples;
}

struct Tally {
  long long ok = 0, insufficient = 0, errors = 0;
  std::vector<std::uint32_t> latencies_us;
};

/// Commands the protocol sends itself: its scripts, and the EXPIRE that keeps a finished group's
/// record. Every other command in INFO commandstats ran inside one of these scripts, whose own
/// time already includes it: summing every line would count it twice.
bool sent_by_client(std::string_view name) {
  for (std::string_view sent :
       {"fcall", "fcall_ro", "evalsha", "evalsha_ro", "eval", "eval_ro", "expire"}) {
    if (name == sent) return true;
  }
  return false;
}

/// Server time so far of the commands the client sends, in microseconds, summed over the
/// primaries.
long long server_usec(Client& client) {
  long long total = 0;
  for (const std::string& node : client.primaries()) {
    Reply r = client.call_on(node, Call::read({"INFO", "commandstats"}));
    const std::string& text = r.str;
    // cmdstat_NAME:calls=N,usec=N,...
    for (std::size_t at = text.find("cmdstat_"); at != std::string::npos;
         at = text.find("cmdstat_", at + 8)) {
      const std::size_t colon = text.find(':', at);
      const std::size_t usec = text.find("usec=", at);
      if (colon == std::string::npos || usec == std::string::npos) break;
      if (sent_by_client(std::string_view(text).substr(at + 8, colon - at - 8))) {
        total += std::atoll(text.c_str() + usec + 5);
      }
    }
  }
  return total;
}

Cart bench_cart(const std::string& run, std::size_t n, const std::vector<Triple>& triples,
                int groups, const KeyScheme& scheme) {
  Cart cart;
  cart.id = fmt::format("{}-order-{}", run, n);
  for (const SpreadLine& line : spread_cart(n, triples.size(), groups)) {
    cart.lines.push_back(HoldLine{triples[line.triple].skus[line.member], 1});
  }
  prepare_cart(cart, scheme);
  return cart;
}

void record(Tally& tally, Status status, Clock::time_point started) {
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count();
  tally.latencies_us.push_back(static_cast<std::uint32_t>(std::min<long long>(us, UINT32_MAX)));
  if (status == Status::ok) {
    ++tally.ok;
  } else if (status == Status::insufficient) {
    ++tally.insufficient;
  } else {
    ++tally.errors;
  }
}

// One connection: carts one after the other, each through the whole protocol.
void order_worker(Program& program, const OrderBenchOptions& o, const std::string& run,
                  const std::vector<Triple>& triples, std::atomic<long long>& budget,
                  std::atomic<std::size_t>& next, Clock::time_point until, Tally& tally,
                  RequestProgress& progress, bool drawer) {
  Context ctx(program);
  HoldOptions hold;
  hold.request_ttl_s = 3600;
  CartStore store{ctx.redis(), ctx.scheme(), ctx.change_log()};
  CartProtocol protocol(store, CartKind::order, hold, ProtocolHooks{});
  for (;;) {
    if (o.duration_s > 0 ? Clock::now() >= until : budget.fetch_sub(1) <= 0) return;
    Cart cart = bench_cart(run, next++, triples, o.slot_groups, ctx.scheme());
    const auto started = Clock::now();
    try {
      protocol.run(cart);
    } catch (const StockctlError&) {
      cart.status = Status::error;
    }
    record(tally, cart.status, started);
    progress.answered(drawer);
  }
}

void delete_keys(Client& client, std::vector<std::string> keys) {
  for (std::string& key : keys) client.call(Call::idempotent_write({"UNLINK", std::move(key)}));
}

// The records the run wrote: each cart's, and each group's (keys scanned on every primary).
void remove_records(Client& client, const KeyScheme& scheme, const std::string& run) {
  const std::string prefix = escape_glob(scheme.prefix);
  const std::string ids = escape_glob(run) + "-order-*";
  for (const std::string& match : {fmt::format("stockctl:cart:{}{{{}", prefix, ids),
                                   fmt::format("stockctl:cart-group:{}{{*}}:{}", prefix, ids)}) {
    for (const std::string& node : client.primaries()) {
      std::string cursor = "0";
      do {
        Reply r =
            client.call_on(node, Call::read({"SCAN", cursor, "MATCH", match, "COUNT", "1000"}));
        if (r.type != Reply::Type::array || r.elements.size() != 2) break;
        cursor = r.elements[0].str;
        std::vector<std::string> found;
        for (const Reply& key : r.elements[1].elements) found.push_back(key.str);
        delete_keys(client, std::move(found));
      } while (cursor != "0");
    }
  }
}

// After the run: the stock taken from the items, whether any went below zero or still holds
// units (every cart is an order: nothing may stay held).
struct Leftover {
  long long taken = 0;
  bool sound = true;
};

Leftover inspect(Client& client, const std::vector<std::string>& keys, long long stock) {
  Leftover left;
  for (const std::string& key : keys) {
    Reply r = client.call(Call::read({"GET", key}));
    auto value = r.string_or_nil() ? parse_stored_value(*r.string_or_nil()) : std::nullopt;
    if (!value || *value < 0) left.sound = false;
    left.taken += stock - value.value_or(0);
    Reply held = client.call(Call::read({"HGET", companion_key(key, kHeldSuffix), ""}));
    if (!held.is_nil() && held.str != "0") left.sound = false;
  }
  return left;
}

Tally run_workers(Program& program, const OrderBenchOptions& o, const std::string& run,
                  const std::vector<Triple>& triples) {
  std::atomic<long long> budget{o.requests};
  std::atomic<std::size_t> next{0};
  const Clock::time_point until =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(o.duration_s * 1000));
  std::vector<Tally> tallies(static_cast<std::size_t>(o.connections));
  std::vector<std::thread> threads;
  threads.reserve(tallies.size());
  RequestProgress progress(o.requests, o.duration_s);
  for (Tally& tally : tallies) {
    threads.emplace_back(order_worker, std::ref(program), std::cref(o), std::cref(run),
                         std::cref(triples), std::ref(budget), std::ref(next), until,
                         std::ref(tally), std::ref(progress), threads.empty());
  }
  for (std::thread& t : threads) t.join();
  progress.finish();
  Tally total;
  for (Tally& t : tallies) {
    total.ok += t.ok;
    total.insufficient += t.insufficient;
    total.errors += t.errors;
    total.latencies_us.insert(total.latencies_us.end(), t.latencies_us.begin(),
                              t.latencies_us.end());
  }
  std::sort(total.latencies_us.begin(), total.latencies_us.end());
  return total;
}

}  // namespace

ExitCode run_order_bench_on_cluster(Program& program, const OrderBenchOptions& o) {
  // The carts' records and groups go under the bench prefix, with no change log, as the
  // test items do.
  Program bench = program;
  bench.common.prefix = o.prefix;
  bench.common.no_log = true;
  Context ctx(bench);
  Client& client = ctx.redis();
  const std::string run = o.run_id.empty() ? random_token().substr(0, 12) : o.run_id;
  const std::vector<Triple> triples = find_triples(
      ctx.scheme(), run, std::max<std::size_t>(3, static_cast<std::size_t>(o.items + 2) / 3));
  std::vector<std::string> keys;
  for (const Triple& t : triples) {
    for (const std::string& sku : t.skus) keys.push_back(stock_key(ctx.scheme(), sku));
  }
  create_bench_items(client, keys, o.stock);

  const long long usec_before = server_usec(client);
  const auto started = Clock::now();
  Tally total = run_workers(bench, o, run, triples);
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  const long long usec = server_usec(client) - usec_before;

  const Leftover left = inspect(client, keys, o.stock);
  const bool correct = left.sound && total.errors == 0 && left.taken == total.ok * 3;
  std::vector<std::string> cleanup;
  for (const std::string& key : keys) {
    cleanup.insert(cleanup.end(),
                   {key, companion_key(key, kHoldsSuffix), companion_key(key, kHeldSuffix)});
  }
  delete_keys(client, cleanup);
  for (const Triple& t : triples) {
    Call forget = Call::idempotent_write({"ZREM", group_index_key(ctx.scheme(), t.slot)});
    for (const std::string& sku : t.skus) forget.args.push_back(stock_key(ctx.scheme(), sku));
    client.call(forget);
  }
  remove_records(client, ctx.scheme(), run);

  const auto carts = static_cast<long long>(total.latencies_us.size());
  nlohmann::ordered_json j;
  j["op"] = "bench";
  j["mode"] = "order";
  j["slot_groups"] = o.slot_groups;
  j["connections"] = o.connections;
  j["items"] = keys.size();
  j["requests"] = carts;
  j["elapsed_ms"] = static_cast<long long>(elapsed * 1000);
  j["throughput_per_s"] =
      elapsed > 0 ? static_cast<long long>(static_cast<double>(carts) / elapsed) : 0;
  j["latency_us"] = {{"p50", percentile(total.latencies_us, 0.50)},
                     {"p99", percentile(total.latencies_us, 0.99)},
                     {"p999", percentile(total.latencies_us, 0.999)}};
  j["server_us_per_cart"] =
      carts > 0 ? static_cast<double>(usec) / static_cast<double>(carts) : 0.0;
  j["ok"] = total.ok;
  j["insufficient"] = total.insufficient;
  j["errors"] = total.errors;
  j["stock_taken"] = left.taken;
  j["correct"] = correct;
  ctx.out().write_summary(j);
  return correct ? ExitCode::ok : ExitCode::failure;
}

}  // namespace stockctl
