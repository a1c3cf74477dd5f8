#include "redis/scripts/put.h"

#include "core/quantity.h"
#include "core/sku.h"
#include "redis/scripts/registry.h"

namespace stockctl {

Call put_call(const PutRequest& request) {
  const bool with_log = request.log != nullptr && request.log->enabled && !request.mode.dry_run;
  std::vector<std::string> keys{request.key, companion_key(request.key, kLockSuffix)};
  if (with_log) keys.insert(keys.end(), {log_key(request.key), first_log_key(request.key)});
  // An item given an expiry takes its log with it, its first entry in an earlier version's
  // slot hash too (put-2.lua): that key is sent only then.
  if (with_log && request.ttl_s > 0) keys.push_back(slot_log_key(request.key));
  std::vector<std::string> args{
      std::to_string(request.value), std::string(put_script_mode(request.mode)),
      std::to_string(request.ttl_s), "1", request.counts_held ? "1" : "0"};
  if (with_log) {
    args.insert(args.end(), {request.change, std::to_string(request.log->max_entries),
                             request.log->actor, request.log->reason});
  }
  Call call = Call::script_call(put_script(), std::move(keys), std::move(args));
  call.idempotent = true;
  call.writes = !request.mode.dry_run;
  return call;
}

Call load_call(const std::vector<LoadRow>& rows, long long ttl_s, const ChangeLogSettings& log,
               const std::string& change) {
  std::vector<std::string> keys;
  keys.reserve(2 * rows.size());
  std::vector<std::string> args{std::to_string(ttl_s), change, std::to_string(log.max_entries),
                                log.actor, log.reason};
  args.reserve(args.size() + rows.size());
  // The item's list is not sent: the script derives it in the rare case it writes there, and
  // every argument costs the server about 1,200 instructions (docs/benchmarks.md).
  for (const LoadRow& row : rows) {
    keys.push_back(row.key);
    keys.push_back(first_log_key(row.key));
    args.push_back(std::to_string(row.value));
  }
  Call call = Call::script_call(load_script(), std::move(keys), std::move(args));
  call.idempotent = true;
  call.writes = true;
  return call;
}

std::optional<PutAnswer> parse_put_answer(const Reply& reply) {
  if (reply.type != Reply::Type::array || reply.elements.size() != 3) return std::nullopt;
  const Reply& held = reply.elements[2];
  if (held.type != Reply::Type::integer || held.integer < 0) return std::nullopt;
  return PutAnswer{reply.elements[0].str, reply.elements[1].string_or_nil(), held.integer};
}

std::int64_t stock_less_held(std::int64_t value, std::int64_t held) {
  if (value == kUnlimited) return value;
  return value > held ? value - held : 0;
}

}  // namespace stockctl
