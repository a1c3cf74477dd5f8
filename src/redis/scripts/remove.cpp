#include "redis/scripts/remove.h"

#include "redis/scripts/registry.h"

namespace stockctl {

Call remove_call(const std::string& stock_key) {
  Call call = Call::script_call(remove_script(), {stock_key}, {});
  call.writes = true;
  return call;
}

std::optional<RemoveAnswer> parse_remove_answer(const Reply& reply) {
  if (reply.type != Reply::Type::array || reply.elements.size() != 2) return std::nullopt;
  const std::string& verdict = reply.elements[0].str;
  if (verdict != "removed" && verdict != "split") return std::nullopt;
  return RemoveAnswer{verdict == "split", reply.elements[1].string_or_nil()};
}

}  // namespace stockctl
