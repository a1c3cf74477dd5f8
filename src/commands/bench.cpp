// `stockctl bench`: N connections deduct from test items for a count or a duration, then report
// throughput, latency percentiles and whether every unit that disappeared was reported sold.
// It works only on keys it created itself, under its own prefix, and removes them afterwards.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "app/context.h"
#include "base/errors.h"
#include "bulk/split_runner.h"
#include "cli/common_options.h"
#include "commands/bench_items.h"
#include "commands/bench_orders.h"
#include "commands/bench_split.h"
#include "commands/program.h"
#include "core/hash_slot.h"
#include "core/quantity.h"
#include "core/sku.h"
#include "lock/init_lock.h"
#include "output/progress.h"
#include "redis/errors.h"
#include "redis/pipelined_connections.h"
#include "redis/scripts/hold.h"
#include "redis/scripts/registry.h"
#include "redis/scripts/stock.h"

namespace stockctl {
namespace {

struct BenchOptions {
  int connections = 50;
  int items = 1;  // 1 = one hot item
  long long stock = 1000000;
  long long requests = 100000;
  double duration_s = 0;  // > 0: run for this long instead of a count
  std::string prefix = "stockctl-bench:";
  std::string run_id;           // default: random
  std::string mode = "deduct";  // or "order": 3-line carts, each line one unit
  int slot_groups = 0;          // --mode order on a cluster: slot groups per cart (0: 3)
  int buckets = 1;              // > 1: the hot item split over this many buckets
};

/// Lines per cart in --mode order.
constexpr int kCartLines = 3;

struct WorkerTally {
  long long ok = 0, insufficient = 0, errors = 0;
  std::vector<std::uint32_t> latencies_us;
};

std::vector<std::string> bench_keys(const BenchOptions& o, const std::string& run) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(o.items));
  const KeyScheme scheme{o.prefix, true};
  for (int i = 0; i < o.items; ++i) keys.push_back(stock_key(scheme, fmt::format("{}-{}", run, i)));
  return keys;
}

// One unit off a test item, with the stock script as `deduct --no-log` sends it (no request
// id, so the stock key, the op and QTY alone).
Call deduction(const std::string& key) {
  StockRequest request{key, "deduct", 1, "", 0, "", 60, nullptr};
  return stock_call(request);
}

// A 3-line cart of one unit each over distinct test items, as `order` sends it (no change
// log): the hold script with its record under the bench prefix.
Call cart_order(const std::vector<std::string>& keys, std::size_t n, const std::string& run) {
  const std::string id = fmt::format("{}-order-{}", run, n);
  HoldRequest request;
  request.record =
      fmt::format("stockctl:hold:{}", keys[0].substr(0, keys[0].find('{'))) + "{" + id + "}";
  request.index = "stockctl:holds-index:bench";
  request.kind = "order";
  request.id = id;
  request.request_ttl_s = 60;
  for (int i = 0; i < kCartLines; ++i) {
    const std::string& key = keys[(n * kCartLines + static_cast<std::size_t>(i)) % keys.size()];
    request.lines.push_back(HoldCallLine{fmt::format("{}", i), key, 1, ""});
  }
  return hold_call(request);
}

// The request number n: a deduction, or a cart with --mode order.
Call bench_call(const BenchOptions& o, const std::vector<std::string>& keys, std::size_t n,
                const std::string& run) {
  if (o.mode == "order") return cart_order(keys, n, run);
  return deduction(keys[n % keys.size()]);
}

// Whether a cart's reply is a success: every line served. Nullopt when it is not a cart's.
std::optional<bool> cart_served(const Reply& reply) {
  const std::optional<HoldAnswer> answer = parse_hold_answer(reply, kCartLines);
  if (!answer) return std::nullopt;
  return answer->all_lines_ok();
}

void record(WorkerTally& tally, const std::optional<Reply>& reply, long long us) {
  tally.latencies_us.push_back(static_cast<std::uint32_t>(std::min<long long>(us, UINT32_MAX)));
  const std::optional<StockAnswer> answer =
      reply ? parse_stock_answer(*reply) : std::optional<StockAnswer>();
  if (answer) {
    (answer->answer >= 0 ? tally.ok : tally.insufficient) += 1;
    return;
  }
  const std::optional<bool> served = reply ? cart_served(*reply) : std::nullopt;
  if (!served) {
    ++tally.errors;
  } else {
    (*served ? tally.ok : tally.insufficient) += 1;  // a cart's lines
  }
}

// On a split item (--buckets): a deduction its connection's bucket could not cover, taken as
// `deduct` takes it from the other buckets.
void deduct_elsewhere(Client& client, const BenchSplitItem& split, WorkerTally& tally) {
  const ItemResult item = split.deduct_from_the_others(client);
  if (item.status == Status::ok) {
    ++tally.ok;
  } else if (item.status == Status::insufficient) {
    ++tally.insufficient;
  } else {
    ++tally.errors;
  }
}

void worker(Context& ctx, const BenchOptions& o, const std::string& run,
            const std::vector<std::string>& keys, std::atomic<long long>& budget,
            std::chrono::steady_clock::time_point until, WorkerTally& tally,
            RequestProgress& progress, bool drawer) {
  std::unique_ptr<Client> client = ctx.new_client();
  std::size_t next = 0;
  for (;;) {
    if (until.time_since_epoch().count() != 0 ? std::chrono::steady_clock::now() >= until
                                              : budget.fetch_sub(1) <= 0) {
      return;
    }
    Call call = bench_call(o, keys, next++, run);
    auto started = std::chrono::steady_clock::now();
    std::vector<CallResult> r = client->run({call});
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count();
    record(
        tally,
        r[0].state == CallResult::State::replied ? std::optional<Reply>(r[0].reply) : std::nullopt,
        us);
    progress.answered(drawer);
  }
}

// The hot item on a cluster (--items 1), split or not: each connection goes straight to the
// node of the key it deducts from (a split item's buckets dealt out over the connections, as
// an application with the layout cached keeps a home bucket per connection), all driven by
// the event loop. A bucket that answers short sends the deduction to `split`'s other buckets
// through `client`, as `deduct` takes it.
struct HotItemPlan {
  std::vector<std::string> connection_keys;
  std::vector<std::string> addresses;
  const BenchSplitItem* split = nullptr;
  Client* client = nullptr;
};

HotItemPlan plan_hot_item(Client& client, bool cluster, const std::string& key,
                          const BenchSplitItem* split, int connections) {
  HotItemPlan plan;
  plan.split = split;
  plan.client = &client;
  const std::vector<SlotRange> ranges = read_slot_ranges(client, cluster);
  for (int c = 0; c < connections; ++c) {
    std::string target = split ? split->bucket(c) : key;
    plan.addresses.push_back(node_of_slot(ranges, key_slot(target)));
    plan.connection_keys.push_back(std::move(target));
  }
  return plan;
}

// One thread multiplexing every connection, as redis-benchmark does: with 50 connections on a
// 2-core machine, 50 blocking threads would measure context switches. Each connection has one
// call on the wire at a time.
void event_loop(PipelinedConnections& connections, const BenchOptions& o, const std::string& run,
                const std::vector<std::string>& keys, const HotItemPlan* hot,
                std::atomic<long long>& budget, std::chrono::steady_clock::time_point until,
                WorkerTally& tally, RequestProgress& progress) {
  using clock = std::chrono::steady_clock;
  std::vector<clock::time_point> sent(connections.size());
  std::size_t next = 0;
  auto more = [&] {
    return until.time_since_epoch().count() != 0 ? clock::now() < until : budget.fetch_sub(1) > 0;
  };
  auto send = [&](std::size_t connection) {
    if (!connections.is_open(connection) || !more()) return;
    connections.send(connection, hot ? deduction(hot->connection_keys[connection])
                                     : bench_call(o, keys, next++, run));
    sent[connection] = clock::now();
  };
  const PipelinedConnections::OnReply on_reply = [&](std::size_t connection,
                                                     const std::optional<Reply>& reply) {
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - sent[connection]);
    const std::optional<StockAnswer> answer =
        hot && hot->split && reply ? parse_stock_answer(*reply) : std::nullopt;
    if (answer && answer->answer == -2) {
      // The connection's bucket is short: the deduction goes on as `deduct` takes it.
      deduct_elsewhere(*hot->client, *hot->split, tally);
      tally.latencies_us.push_back(
          static_cast<std::uint32_t>(std::min<long long>(us.count(), UINT32_MAX)));
    } else {
      record(tally, reply, us.count());
    }
    progress.answered(true);
    send(connection);
  };
  for (std::size_t i = 0; i < connections.size(); ++i) send(i);
  while (connections.outstanding() > 0) {
    if (!connections.deliver_replies(on_reply)) {
      throw ConnectionError("bench: no reply within --timeout");
    }
  }
}

// The order records the run wrote (stockctl:hold:PREFIX{RUN-order-N}).
void remove_records(Client& client, const std::string& prefix, const std::string& run) {
  const std::string match = fmt::format("stockctl:hold:{}{{{}-order-*", escape_glob(prefix), run);
  std::string cursor = "0";
  do {
    Reply r = client.call(Call::read({"SCAN", cursor, "MATCH", match, "COUNT", "1000"}));
    if (r.type != Reply::Type::array || r.elements.size() != 2) return;
    cursor = r.elements[0].str;
    Call del{nullptr, {"UNLINK"}, true, true};
    for (const Reply& key : r.elements[1].elements) del.args.push_back(key.str);
    if (del.args.size() > 1) client.call(del);
  } while (cursor != "0");
}

ExitCode run_bench(Program& program, const BenchOptions& o) {
  if (o.mode == "order" && o.items < kCartLines) {
    throw InputError(fmt::format("bench --mode order needs --items {} or more", kCartLines));
  }
  if (o.slot_groups != 0 && (o.mode != "order" || !program.common.cluster)) {
    throw InputError("bench --slot-groups applies only to --mode order with --cluster");
  }
  if (o.buckets > 1 && (o.mode != "deduct" || o.items != 1)) {
    throw InputError("bench --buckets applies to one hot item (--items 1) in --mode deduct");
  }
  if (o.mode == "order" && program.common.cluster) {
    return run_order_bench_on_cluster(
        program, OrderBenchOptions{o.connections, o.items, o.stock, o.requests, o.duration_s,
                                   o.prefix, o.run_id, o.slot_groups == 0 ? 3 : o.slot_groups});
  }
  Context ctx(program);
  Client& client = ctx.redis();
  const std::string run = o.run_id.empty() ? random_token().substr(0, 12) : o.run_id;
  std::vector<std::string> keys = bench_keys(o, run);
  create_bench_items(client, keys, o.stock);
  std::optional<BenchSplitItem> split;
  if (o.buckets > 1) split.emplace(client, program.common.cluster, keys[0], o.buckets);
  // A cluster spreads many items over nodes: one client (and thread) per connection keeps the
  // routing in the cluster client. One hot item, split or not, is driven by the event loop,
  // each connection to its key's node.
  std::optional<HotItemPlan> hot;
  if (split || (program.common.cluster && o.mode == "deduct" && o.items == 1)) {
    hot = plan_hot_item(client, program.common.cluster, keys[0], split ? &*split : nullptr,
                        o.connections);
  }
  const bool threads_per_connection = program.common.cluster && !hot;
  std::atomic<long long> budget{o.requests};
  auto until = o.duration_s > 0
                   ? std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(static_cast<long long>(o.duration_s * 1000))
                   : std::chrono::steady_clock::time_point{};
  std::vector<WorkerTally> tallies(threads_per_connection ? static_cast<std::size_t>(o.connections)
                                                          : 1);
  RequestProgress progress(o.requests, o.duration_s);
  auto started = std::chrono::steady_clock::now();
  if (!threads_per_connection) {
    // The event loop sends its calls raw, without the client's recovery of a missing script.
    const ScriptCalls calls = load_scripts_for_raw_calls(client, {&stock_script(), &hold_script()});
    std::unique_ptr<PipelinedConnections> connections =
        hot && program.common.cluster
            ? ctx.open_pipelined_to(hot->addresses, calls)
            : ctx.open_pipelined(static_cast<std::size_t>(o.connections), calls);
    event_loop(*connections, o, run, keys, hot ? &*hot : nullptr, budget, until, tallies[0],
               progress);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(tallies.size());
    for (auto& tally : tallies) {
      threads.emplace_back(worker, std::ref(ctx), std::cref(o), std::cref(run), std::cref(keys),
                           std::ref(budget), until, std::ref(tally), std::ref(progress),
                           threads.empty());
    }
    for (auto& t : threads) t.join();
  }
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  progress.finish();

  WorkerTally total;
  for (auto& t : tallies) {
    total.ok += t.ok;
    total.insufficient += t.insufficient;
    total.errors += t.errors;
    total.latencies_us.insert(total.latencies_us.end(), t.latencies_us.begin(),
                              t.latencies_us.end());
  }
  std::sort(total.latencies_us.begin(), total.latencies_us.end());

  // The verdict: every unit that left the items was reported sold, and nothing went below zero.
  long long remaining = 0;
  bool never_negative = true;
  if (split) {
    const std::optional<long long> left = split->remaining(client);
    never_negative = left && *left >= 0;
    remaining = left.value_or(0);
    split->merge(client);
  }
  for (const std::string& key : split ? std::vector<std::string>{} : keys) {
    Reply r = client.call(Call::read({"GET", key}));
    auto value = r.string_or_nil() ? parse_stored_value(*r.string_or_nil()) : std::nullopt;
    if (!value || *value < 0) never_negative = false;
    remaining += value.value_or(0);
  }
  long long taken = o.stock * o.items - remaining;
  const long long per_request = o.mode == "order" ? kCartLines : 1;
  bool correct = never_negative && total.errors == 0 && taken == total.ok * per_request;
  for (const std::string& key : keys) {
    Call del = Call::once({"DEL", key});
    del.idempotent = true;  // resent if lost; the test keys need no replica acknowledgement
    client.call(del);
  }
  if (o.mode == "order") remove_records(client, keys[0].substr(0, keys[0].find('{')), run);

  nlohmann::ordered_json j;
  j["op"] = "bench";
  j["mode"] = o.mode;
  j["connections"] = o.connections;
  j["items"] = o.items;
  if (split) j["buckets"] = o.buckets;
  j["requests"] = total.latencies_us.size();
  j["elapsed_ms"] = static_cast<long long>(elapsed * 1000);
  j["throughput_per_s"] =
      elapsed > 0 ? static_cast<long long>(static_cast<double>(total.latencies_us.size()) / elapsed)
                  : 0;
  j["latency_us"] = {{"p50", percentile(total.latencies_us, 0.50)},
                     {"p99", percentile(total.latencies_us, 0.99)},
                     {"p999", percentile(total.latencies_us, 0.999)}};
  j["ok"] = total.ok;
  j["insufficient"] = total.insufficient;
  j["errors"] = total.errors;
  j["stock_taken"] = taken;
  j["correct"] = correct;
  ctx.out().write_summary(j);
  return correct ? ExitCode::ok : ExitCode::failure;
}

}  // namespace

void setup_bench(CLI::App& app, Program& program) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench",
      "load test: N connections deduct from test items it creates, then checks the result");
  sub->add_option("-c,--connections", o->connections, "concurrent connections (default 50)")
      ->check(integer_range(1, 1000));
  sub->add_option("--items", o->items, "test items; 1 = one hot item (default 1)")
      ->check(integer_range(1, 1000000));
  sub->add_option("--stock", o->stock, "initial stock of each test item (default 1000000)")
      ->check(integer_range(0, kMaxStock));
  sub->add_option("-n,--requests", o->requests, "deductions to send in all (default 100000)")
      ->check(integer_range(1, 1LL << 40));
  sub->add_option("--duration", o->duration_s, "run for this many seconds instead of a count")
      ->check(number_range(0.0, 86400.0));
  sub->add_option("--bench-prefix", o->prefix,
                  "prefix of the test keys (default stockctl-bench:); existing keys are refused")
      ->check(key_prefix());
  sub->add_option("--run-id", o->run_id,
                  "name the test keys PREFIX{ID-N} instead of a random id (for repeatable runs)");
  sub->add_option("--mode", o->mode,
                  "deduct (default: one unit per request) or order (3-line carts of one unit "
                  "each, as `order` sends them)")
      ->check(CLI::IsMember({"deduct", "order"}).description(""));
  sub->add_option("--slot-groups", o->slot_groups,
                  "with --mode order on a cluster: how many slot groups each cart spans, 1, 2 "
                  "or 3 (default 3)")
      ->check(integer_range(1, 3));
  sub->add_option("--buckets", o->buckets,
                  "split the hot item over N buckets for the run (2 to 64; see split), each "
                  "connection deducting from one bucket; 1 (default): not split")
      ->check(integer_range(1, 64));
  add_common_footer(*sub);
  sub->callback([&program, o] { program.run = [&program, o] { return run_bench(program, *o); }; });
}

}  // namespace stockctl
