#include "redis/scripts/lock.h"

#include "redis/scripts/registry.h"

namespace stockctl {

Call unlock_call(const std::string& key, const std::string& token) {
  Call call = Call::script_call(unlock_script(), {key}, {token});
  call.idempotent = true;
  return call;
}

Call extend_call(const std::string& key, const std::string& token, long long ttl_ms) {
  Call call = Call::script_call(extend_script(), {key}, {token, std::to_string(ttl_ms)});
  call.idempotent = true;
  return call;
}

bool parse_extend_answer(const Reply& reply) {
  return reply.type == Reply::Type::integer && reply.integer == 1;
}

}  // namespace stockctl
