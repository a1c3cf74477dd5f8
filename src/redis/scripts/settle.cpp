#include "redis/scripts/settle.h"

#include "redis/scripts/hold.h"
#include "redis/scripts/registry.h"

namespace stockctl {

Call settle_call(const SettleRequest& request) {
  const bool logging = request.log != nullptr && request.log->enabled;
  std::vector<std::string> keys{request.record, request.index};
  for (const std::string& stock : request.stock_keys) append_hold_line_keys(keys, stock, logging);
  Call call = Call::script_call(
      settle_script(), std::move(keys),
      {request.action, request.id, logging ? std::to_string(request.log->max_entries) : "",
       request.log != nullptr ? request.log->actor : "",
       request.log != nullptr ? request.log->reason : "", logging ? "4" : "3"});
  call.idempotent = true;  // a repeat answers "ok", replayed
  call.writes = true;
  return call;
}

std::optional<SettleReply> parse_settle_reply(const Reply& reply) {
  if (reply.type != Reply::Type::array || reply.elements.size() < 2 ||
      reply.elements[0].type != Reply::Type::string) {
    return std::nullopt;
  }
  SettleReply answer;
  answer.status = reply.elements[0].str;
  if (answer.status == "removed") {
    if (reply.elements[1].integer < 1) return std::nullopt;
    answer.removed_line = static_cast<std::size_t>(reply.elements[1].integer - 1);
  } else {
    answer.replayed = reply.elements[1].integer == 1;
  }
  for (std::size_t i = 2; i < reply.elements.size(); ++i) {
    answer.stocks.push_back(reply.elements[i].integer);
  }
  return answer;
}

}  // namespace stockctl
