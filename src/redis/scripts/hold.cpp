#include "redis/scripts/hold.h"

#include <algorithm>

#include "core/sku.h"
#include "redis/scripts/registry.h"

namespace stockctl {

void append_hold_line_keys(std::vector<std::string>& keys, const std::string& stock, bool log) {
  keys.push_back(stock);
  keys.push_back(companion_key(stock, kHoldsSuffix));
  keys.push_back(companion_key(stock, kHeldSuffix));
  if (log) keys.push_back(log_key(stock));
}

Call hold_call(const HoldRequest& request) {
  const bool logging = request.log != nullptr && request.log->enabled;
  std::vector<std::string> keys{request.record, request.index};
  keys.reserve(2 + request.lines.size() * (logging ? 4 : 3));
  for (const HoldCallLine& line : request.lines) append_hold_line_keys(keys, line.key, logging);
  std::vector<std::string> args{request.kind,
                                request.id,
                                std::to_string(request.life_ms),
                                std::to_string(request.request_ttl_s),
                                std::to_string(request.ttl_s),
                                logging ? std::to_string(request.log->max_entries) : "",
                                request.log != nullptr ? request.log->actor : "",
                                request.log != nullptr ? request.log->reason : "",
                                logging ? "4" : "3"};
  args.reserve(args.size() + 3 * request.lines.size());
  for (const HoldCallLine& line : request.lines) {
    args.insert(args.end(), {line.sku, std::to_string(line.qty), line.init});
  }
  Call call = Call::script_call(hold_script(), std::move(keys), std::move(args));
  call.idempotent = true;  // a repeat of the id answers the first answer
  call.writes = true;
  return call;
}

bool HoldAnswer::all_lines_ok() const {
  return std::all_of(lines.begin(), lines.end(),
                     [](const HoldLineAnswer& line) { return line.code >= -1; });
}

std::optional<HoldAnswer> parse_hold_answer(const Reply& reply, std::size_t lines) {
  if (reply.type != Reply::Type::array || reply.elements.size() != 2 + 2 * lines) {
    return std::nullopt;
  }
  HoldAnswer answer;
  // A repeat answers 1, or the state of a hold that is no longer held.
  const Reply& first = reply.elements[0];
  answer.replayed = first.integer == 1 || first.type == Reply::Type::string;
  answer.since = first.type == Reply::Type::string ? first.str : "";
  answer.expires_at_ms = reply.elements[1].integer;
  answer.lines.reserve(lines);
  for (std::size_t i = 0; i < lines; ++i) {
    answer.lines.push_back(
        HoldLineAnswer{reply.elements[2 + 2 * i].integer, reply.elements[3 + 2 * i].integer});
  }
  return answer;
}

}  // namespace stockctl
