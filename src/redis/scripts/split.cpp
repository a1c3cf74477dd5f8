#include "redis/scripts/split.h"

#include "core/sku.h"
#include "redis/scripts/registry.h"

namespace stockctl {

Call split_item_call(const SplitItemRequest& request) {
  const bool with_log = request.log != nullptr && request.log->enabled;
  std::vector<std::string> keys{request.key, companion_key(request.key, kHoldsSuffix),
                                companion_key(request.key, kHeldSuffix), log_key(request.key)};
  std::string third = request.op == "drained" ? std::to_string(request.units)
                                              : (request.target.plain() ? "-" : request.target.gen);
  std::vector<std::string> args{request.op, request.expected, std::move(third),
                                format_bucket_tags(request.target.slots)};
  if (with_log) {
    args.insert(args.end(), {std::to_string(request.log->max_entries), request.log->actor,
                             request.log->reason});
  }
  Call call = Call::script_call(split_item_script(), std::move(keys), std::move(args));
  call.idempotent = true;
  call.writes = true;
  return call;
}

Call drain_bucket_call(const std::string& key, const std::string& gen) {
  Call call = Call::script_call(split_bucket_script(), {key}, {"drain", gen});
  call.idempotent = true;
  call.writes = true;
  return call;
}

std::optional<SplitAnswer> parse_split_answer(const Reply& reply) {
  if (reply.type != Reply::Type::array || reply.elements.size() != 2) return std::nullopt;
  const Reply& status = reply.elements[0];
  const Reply& value = reply.elements[1];
  if (status.type != Reply::Type::string) return std::nullopt;
  if (value.type == Reply::Type::integer)
    return SplitAnswer{status.str, std::to_string(value.integer)};
  return SplitAnswer{status.str, value.string_or_nil()};
}

}  // namespace stockctl
