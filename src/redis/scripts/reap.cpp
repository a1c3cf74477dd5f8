#include "redis/scripts/reap.h"

#include "redis/scripts/registry.h"

namespace stockctl {

Call reap_call(const std::string& index, int batch, const ChangeLogSettings& log) {
  Call call =
      Call::script_call(reap_script(), {index},
                        {std::to_string(batch), log.enabled ? std::to_string(log.max_entries) : "",
                         log.actor, log.reason});
  call.idempotent = true;  // what a first call gave back, a second finds given back
  call.writes = true;
  return call;
}

std::optional<ReapReply> parse_reap_reply(const Reply& r) {
  if (r.type != Reply::Type::array || r.elements.size() != 6 ||
      r.elements[3].type != Reply::Type::array || r.elements[4].type != Reply::Type::array ||
      r.elements[4].elements.size() % 2 != 0 || r.elements[5].type != Reply::Type::array) {
    return std::nullopt;
  }
  ReapReply reply;
  reply.units = r.elements[1].integer;
  reply.more = r.elements[2].integer == 1;
  for (const Reply& id : r.elements[3].elements) reply.ids.push_back(id.str);
  const std::vector<Reply>& nowhere = r.elements[4].elements;
  for (std::size_t i = 0; i + 1 < nowhere.size(); i += 2) {
    reply.nowhere.emplace_back(nowhere[i].str, nowhere[i + 1].integer);
  }
  for (const Reply& key : r.elements[5].elements) reply.kept.push_back(key.str);
  return reply;
}

}  // namespace stockctl
