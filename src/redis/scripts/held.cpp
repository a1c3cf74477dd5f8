#include "redis/scripts/held.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/quantity.h"
#include "core/sku.h"
#include "redis/scripts/registry.h"

namespace stockctl {
namespace {

// held_view-3.lua's keys: the holds, the held units, the stock key.
std::vector<Call> held_view_reads(const Call& call) {
  return {Call::read({"ZRANGE", call.args[0], "0", "-1", "WITHSCORES"}),
          Call::read({"HGETALL", call.args[1]}), Call::read({"GET", call.args[2]})};
}

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Reply integer_reply(std::int64_t value) {
  Reply r;
  r.type = Reply::Type::integer;
  r.integer = value;
  return r;
}

// What held_view-3.lua answers, computed from its three keys read one by one. Expiry is judged
// by this machine's clock instead of the server's (doctor's clock check warns past 1 s): a read
// during a migration may be that far off for a hold expiring in that second.
CallResult held_view_combine(const Call& /*call*/, std::vector<CallResult> results) {
  for (CallResult& r : results) {
    if (r.state != CallResult::State::replied || r.reply.is_error()) return std::move(r);
  }
  const Reply& holds = results[0].reply;
  const Reply& held = results[1].reply;
  std::int64_t total = 0;
  std::vector<std::pair<std::string, std::int64_t>> units;  // hold id -> qty
  for (std::size_t i = 0; i + 1 < held.elements.size(); i += 2) {
    const std::int64_t qty = parse_stored_value(held.elements[i + 1].str).value_or(0);
    if (held.elements[i].str.empty()) {
      total = qty;
    } else {
      units.emplace_back(held.elements[i].str, qty);
    }
  }
  CallResult out;
  out.state = CallResult::State::replied;
  if (total <= 0) {
    out.reply = integer_reply(0);
    return out;
  }
  const std::int64_t now = now_ms();
  std::int64_t expired = 0;
  for (std::size_t i = 0; i + 1 < holds.elements.size(); i += 2) {
    if (std::stod(holds.elements[i + 1].str) > static_cast<double>(now)) continue;
    for (const auto& [id, qty] : units) {
      if (id == holds.elements[i].str) expired += qty;
    }
  }
  if (expired == 0) {
    out.reply = integer_reply(total);
    return out;
  }
  out.reply.type = Reply::Type::array;
  out.reply.elements = {integer_reply(total - expired), integer_reply(expired),
                        std::move(results[2].reply)};
  return out;
}

const SplitRead kHeldViewSplit{held_view_reads, held_view_combine};

}  // namespace

Call held_view_call(const std::string& stock_key) {
  Call call{
      &held_view_script(),
      {companion_key(stock_key, kHoldsSuffix), companion_key(stock_key, kHeldSuffix), stock_key},
      true};
  call.split = &kHeldViewSplit;
  return call;
}

std::optional<HeldView> held_view_from(const CallResult& result) {
  if (result.state != CallResult::State::replied) return std::nullopt;
  const Reply& reply = result.reply;
  if (reply.type == Reply::Type::integer) return HeldView{reply.integer, 0, std::nullopt};
  if (reply.type != Reply::Type::array || reply.elements.size() < 2 || reply.elements.size() > 3 ||
      reply.elements[0].type != Reply::Type::integer ||
      reply.elements[1].type != Reply::Type::integer || reply.elements[1].integer < 0) {
    return std::nullopt;
  }
  HeldView view{reply.elements[0].integer, reply.elements[1].integer, std::nullopt};
  if (reply.elements.size() == 3) view.value = reply.elements[2].string_or_nil();
  return view;
}

std::optional<std::string> logical_value(const std::optional<std::string>& stored,
                                         const HeldView& view) {
  const std::optional<std::string>& value = view.value ? *view.value : stored;
  if (!value || view.expired == 0) return value;
  const std::optional<std::int64_t> stock = parse_stored_value(*value);
  if (!stock || *stock == kUnlimited) return value;
  return std::to_string(*stock + view.expired);
}

}  // namespace stockctl
