// `delete SKU...`: remove items, stock key and every companion key (lock, ledger, log, holds).

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "app/context.h"
#include "app/item_list.h"
#include "base/diagnostics.h"
#include "bulk/split_runner.h"
#include "cli/common_options.h"
#include "commands/holds.h"
#include "commands/program.h"
#include "core/cart_keys.h"
#include "core/error_reply.h"
#include "core/sku.h"
#include "redis/errors.h"
#include "redis/scripts/held.h"
#include "redis/scripts/remove.h"

namespace stockctl {
namespace {

struct DeleteOptions {
  std::vector<std::string> skus;
  bool force = false;
};

// The pattern that finds ledger keys, ":ids:TTL:GENERATION" and the earlier versions'
// ":req:ID" (the class [ri][ed][qs] matches both): with hash tags they all look like
// PREFIX{SKU}:ids:...; without, where they live depends on each key's own tag.
std::string request_pattern(const KeyScheme& scheme) {
  static const std::string kInfix = ":[ri][ed][qs]:*";
  if (scheme.hashtag) return escape_glob(scheme.prefix) + "{*}" + kInfix;
  return "*" + kInfix;
}

// The item whose ledger key `key` is, found in `owner` (ledger key prefix -> item).
const std::size_t* ledger_owner(const std::map<std::string, std::size_t, std::less<>>& owner,
                                std::string_view key) {
  for (std::string_view infix : {kLedgerSuffix, kRequestSuffix}) {
    for (auto at = key.find(infix); at != std::string_view::npos; at = key.find(infix, at + 1)) {
      auto it = owner.find(key.substr(0, at + infix.size()));
      if (it != owner.end()) return &it->second;
    }
  }
  return nullptr;
}

// Finds every ledger key of the items (one per generation and request ttl; one per request id
// in earlier versions), with one SCAN pass per primary whatever the number of items. Returns,
// per item, the keys found.
std::vector<std::vector<std::string>> find_request_records(Context& ctx,
                                                           const std::vector<ItemResult>& items) {
  std::map<std::string, std::size_t, std::less<>> owner;  // "<stock key's ledger prefix>" -> item
  for (std::size_t i = 0; i < items.size(); ++i) {
    owner[companion_key(items[i].key, kRequestSuffix)] = i;
    owner[companion_key(items[i].key, kLedgerSuffix)] = i;
  }
  std::vector<std::vector<std::string>> found(items.size());
  const std::string pattern = request_pattern(ctx.scheme());
  for (const std::string& node : ctx.redis().primaries()) {
    std::string cursor = "0";
    do {
      Reply reply = ctx.redis().call_on(
          node, Call::read({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}));
      if (reply.is_error()) {
        throw ConnectionError(fmt::format(
            "SCAN: {}", error_on(ctx.redis().node_address(node), reply.str, ctx.scheme().prefix)));
      }
      if (reply.elements.size() != 2) {
        throw ConnectionError(fmt::format("SCAN: {}", describe_reply(reply)));
      }
      cursor = reply.elements[0].str;
      for (Reply& key : reply.elements[1].elements) {
        if (const std::size_t* item = ledger_owner(owner, key.str)) {
          found[*item].push_back(std::move(key.str));
        }
      }
    } while (cursor != "0");
  }
  return found;
}

// Sets what the delete removed: `ok` with the item's value in "previous" (its logical value, as
// get shows it: expired holds' units not yet given back are stock; -1 for unlimited; a value
// that is not a stock as it was) and the units of its unexpired holds in "held", or `missing`.
void report_removed(ItemResult& item, const CallResult& held,
                    const std::optional<std::string>& stored) {
  const std::optional<HeldView> view = held_view_from(held);
  item.status = stored ? Status::ok : Status::missing;
  item.forced = true;  // prints "previous", null when nothing was there
  item.previous = view && stored ? logical_value(stored, *view) : stored;
  item.has_held = true;
  item.held = view ? std::optional<std::int64_t>(view->held) : std::nullopt;
}

// Whether the item may be removed: with --force, or when it has no unexpired holds (else it is
// `conflict`). An item whose holds cannot be read gets that error, and nothing is sent for it.
bool may_remove(Client& client, ItemResult& item, bool force) {
  if (force) return true;
  try {
    if (!has_unexpired_holds(client, item.key)) return true;
    set_error(item, Status::conflict, "the item has unexpired holds (--force deletes it)");
  } catch (const ConnectionError& e) {
    set_not_applied(item, e.what());
  }
  return false;
}

// What the item held, so that its line says what was removed: its holds, then its stock key,
// taken by the remove script, for the items `which` names. The script keeps a split item's
// layout record (checked in the same moment as the delete, so that a split beginning meanwhile
// is never cut off from its buckets): those items are returned, for their buckets to be merged
// first. The items removed (or never there) go to `removed`; the others have their error.
std::vector<std::size_t> remove_once(Context& ctx, std::vector<ItemResult>& items, bool force,
                                     const std::vector<std::size_t>& which,
                                     std::vector<std::size_t>& removed) {
  std::vector<Call> calls;
  std::vector<std::size_t> sent;
  for (std::size_t i : which) {
    if (!items[i].error.empty() || !may_remove(ctx.redis(), items[i], force)) continue;
    calls.push_back(held_view_call(items[i].key));
    calls.push_back(remove_call(items[i].key));
    sent.push_back(i);
  }
  const std::vector<CallResult> results = ctx.redis().run(calls);
  std::vector<std::size_t> split;
  for (std::size_t k = 0; k < sent.size(); ++k) {
    ItemResult& item = items[sent[k]];
    const CallResult& r = results[2 * k + 1];
    if (r.state != CallResult::State::replied) {
      set_error(item, Status::error, r.error);
    } else if (r.reply.is_error()) {
      apply_error_reply(item, r.reply.str);  // NOPERM (no scripting) says what the user lacks
    } else if (std::optional<RemoveAnswer> answer = parse_remove_answer(r.reply); !answer) {
      set_error(
          item, Status::error,
          fmt::format("unexpected reply from the remove script: {}", describe_reply(r.reply)));
    } else if (answer->split) {
      split.push_back(sent[k]);
    } else {
      report_removed(item, results[2 * k], answer->value);
      removed.push_back(sent[k]);
    }
  }
  return split;
}

// Merges the split items `which` back into their stock keys (the split command's crash-safe
// steps, docs/split.md), so that the remove script then takes their units whole. An item whose
// merge fails keeps its error and is not deleted.
std::vector<std::size_t> merge_split_items(Context& ctx, std::vector<ItemResult>& items,
                                           const std::vector<std::size_t>& which, bool cluster) {
  std::vector<SlotRange> ranges;
  try {
    ranges = read_slot_ranges(ctx.redis(), cluster);
  } catch (const ConnectionError& e) {  // the cluster's slot map: nothing merged yet
    for (std::size_t i : which) {
      set_error(
          items[i], Status::error,
          fmt::format("merging its buckets before the delete: {}; nothing deleted", e.what()));
    }
    return {};
  }
  SplitRunner runner(ctx.redis(), std::move(ranges), ctx.change_log());
  std::vector<std::size_t> merged;
  for (std::size_t i : which) {
    ItemResult merge = items[i];
    merge.op = "split";
    runner.run(merge, 1);
    if (merge.status == Status::ok) {
      merged.push_back(i);
    } else {
      set_error(
          items[i], Status::error,
          fmt::format("merging its buckets before the delete: {}; nothing deleted", merge.error));
    }
  }
  return merged;
}

// Removes the items' stock keys: a split item's buckets are merged back first (`merged` says
// which). Returns the items whose stock key is gone (or was never there).
std::vector<std::size_t> remove_stock_keys(Context& ctx, std::vector<ItemResult>& items, bool force,
                                           bool cluster, std::vector<std::size_t>& merged) {
  std::vector<std::size_t> all(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) all[i] = i;
  std::vector<std::size_t> removed;
  const std::vector<std::size_t> split = remove_once(ctx, items, force, all, removed);
  if (split.empty()) return removed;
  merged = merge_split_items(ctx, items, split, cluster);
  for (std::size_t i : remove_once(ctx, items, force, merged, removed)) {
    set_error(items[i], Status::error,
              "the item was split again while delete merged it; run delete again");
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

// Of each removed item's first log entry and kept-logs set, two per item: the key, or "" where
// it holds something else. Those suffixes came after item ids were checked against them: under
// a prefix with a hash tag and --no-hashtag, an earlier version may have let another item be
// named "<id>:first", whose stock key this would be. A first entry holds the separator 0x1f,
// which a stock value never does; the kept logs are a set, a stock key a string.
std::vector<std::string> own_late_companions(Context& ctx, std::vector<ItemResult>& items,
                                             const std::vector<std::size_t>& removed) {
  std::vector<Call> reads;
  for (std::size_t i : removed) {
    reads.push_back(Call::read({"GET", first_log_key(items[i].key)}));
    reads.push_back(Call::read({"TYPE", companion_key(items[i].key, kKeptLogsSuffix)}));
  }
  const std::vector<CallResult> found = ctx.redis().run(reads);
  std::vector<std::string> own;
  for (std::size_t k = 0; k < removed.size(); ++k) {
    const std::string& key = items[removed[k]].key;
    const CallResult& first = found[2 * k];
    const CallResult& kept = found[2 * k + 1];
    const bool first_ours = first.state == CallResult::State::replied &&
                            first.reply.type == Reply::Type::string &&
                            first.reply.str.find('\x1f') != std::string::npos;
    const bool kept_ours = kept.state == CallResult::State::replied && kept.reply.str == "set";
    for (const CallResult* read : {&first, &kept}) {
      if (read->state != CallResult::State::replied)
        set_error(items[removed[k]], Status::error, read->error);
    }
    own.push_back(first_ours ? first_log_key(key) : std::string());
    own.push_back(kept_ours ? companion_key(key, kKeptLogsSuffix) : std::string());
  }
  return own;
}

// The companions of the items whose stock key is gone: lock, logs (its first entry's key too,
// and an earlier version's entry in its slot's hash), holds, ledgers, and on a cluster its place in
// the index of items with group holds in its slot (so that the index never outgrows the items that
// exist). A failure here leaves the item `error`; running delete again removes what is left.
void remove_companions(Context& ctx, std::vector<ItemResult>& items,
                       const std::vector<std::size_t>& removed,
                       const std::vector<std::vector<std::string>>& records, bool cluster) {
  const std::vector<std::string> own = own_late_companions(ctx, items, removed);
  std::vector<Call> calls;
  std::vector<std::string> named;  // per call, the key a refusal of it names
  const std::size_t per_item = cluster ? 3 : 2;
  for (std::size_t k = 0; k < removed.size(); ++k) {
    const std::size_t i = removed[k];
    const std::string& key = items[i].key;
    Call companions{nullptr,
                    {"DEL", companion_key(key, kLockSuffix), log_key(key), stream_log_key(key),
                     companion_key(key, kHoldsSuffix), companion_key(key, kHeldSuffix)},
                    true,
                    true};
    for (std::size_t c = 2 * k; c < 2 * k + 2; ++c) {
      if (!own[c].empty()) companions.args.push_back(own[c]);
    }
    companions.args.insert(companions.args.end(), records[i].begin(), records[i].end());
    calls.push_back(std::move(companions));
    named.push_back(key);
    // Under ~stockctl:*, which a user limited to the items' keys may not touch: the refusal
    // names these keys, not the item's.
    calls.push_back(Call::idempotent_write({"HDEL", slot_log_key(key), key}));
    named.push_back(slot_log_key(key));
    if (cluster) {
      calls.push_back(
          Call::idempotent_write({"ZREM", group_index_key(ctx.scheme(), cart_slot(key)), key}));
      named.push_back(calls.back().args[1]);
    }
  }
  const std::vector<CallResult> results = ctx.redis().run(calls);
  for (std::size_t k = 0; k < removed.size(); ++k) {
    ItemResult& item = items[removed[k]];
    for (std::size_t c = per_item * k; c < per_item * (k + 1); ++c) {
      const CallResult& r = results[c];
      if (r.state != CallResult::State::replied) {
        set_error(item, Status::error, r.error);
      } else if (r.reply.is_error()) {
        set_error(item, Status::error, error_on(named[c], r.reply.str, ctx.scheme().prefix));
      }
    }
  }
}

// The merge carried the buckets' request ids into the merged items' own ledgers: found now,
// into `records`. When they cannot be looked for, those items (deleted) say so: a second
// delete finds them.
void find_carried_records(Context& ctx, std::vector<ItemResult>& items,
                          const std::vector<std::size_t>& merged,
                          std::vector<std::vector<std::string>>& records) {
  std::vector<ItemResult> merged_items;
  merged_items.reserve(merged.size());
  for (std::size_t i : merged) merged_items.push_back(items[i]);
  try {
    const std::vector<std::vector<std::string>> carried = find_request_records(ctx, merged_items);
    for (std::size_t m = 0; m < merged.size(); ++m) records[merged[m]] = carried[m];
  } catch (const ConnectionError& e) {
    for (std::size_t i : merged) {
      set_error(items[i], Status::error,
                fmt::format("{}: deleted, but the request ledgers its buckets' merge carried "
                            "cannot be looked for (delete it again to remove them): {}",
                            items[i].key, e.what()));
    }
  }
}

// Removes the items and their companions, each item left with its answer: a step that fails
// (refused, unanswered) ends no run without one line per item.
void delete_items(Context& ctx, std::vector<ItemResult>& items, bool force, bool cluster) {
  std::vector<std::vector<std::string>> records;
  try {
    records = find_request_records(ctx, items);
  } catch (const ConnectionError& e) {
    for (ItemResult& item : items) {  // nothing was sent yet
      set_not_applied(item, fmt::format("{}: its request ledgers cannot be looked for: {}",
                                        item.key, e.what()));
    }
    return;
  }
  std::vector<std::size_t> merged;
  std::vector<std::size_t> removed = remove_stock_keys(ctx, items, force, cluster, merged);
  if (!merged.empty()) find_carried_records(ctx, items, merged, records);
  remove_companions(ctx, items, removed, records, cluster);
}

ExitCode run_delete(Program& program, const DeleteOptions& o) {
  Context ctx(program);
  std::vector<ItemResult> items = named_items(ctx, "delete", o.skus);
  ExitFold fold;
  if (refuse_invalid_items(ctx, items, "deleted", fold)) return fold.code();
  ctx.on_unconnected(items, true);
  ctx.redis();  // connects first: when it cannot, on_unconnected has given every item its line
  delete_items(ctx, items, o.force, program.common.cluster);
  for (const ItemResult& item : items) {
    if (item.status == Status::error || item.status == Status::conflict) {
      print_error(fmt::format("item '{}': {}", item.sku, item.error));
    }
    ctx.emit(item, fold);
  }
  return fold.code();
}

}  // namespace

void setup_delete(CLI::App& app, Program& program) {
  auto o = std::make_shared<DeleteOptions>();
  CLI::App* sub = app.add_subcommand(
      "delete",
      "remove items: stock key and every companion key (lock, request records, log; a split "
      "item is merged first); each line says what it removed (\"previous\": the stock, "
      "\"held\": the units in holds)");
  sub->add_option("SKU", o->skus, "item ids")->required();
  sub->add_flag("--force", o->force, "delete items that have unexpired holds too");
  add_common_footer(*sub);
  sub->callback([&program, o] { program.run = [&program, o] { return run_delete(program, *o); }; });
}

}  // namespace stockctl
