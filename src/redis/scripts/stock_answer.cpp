#include "redis/scripts/stock_answer.h"

namespace stockctl {

std::optional<ScriptAnswer> parse_stock_answer(const Reply& reply) {
  // The common answer is one integer: the smallest reply the server can build and send.
  if (reply.type == Reply::Type::integer) return ScriptAnswer{reply.integer, reply.integer, false};
  if (reply.type != Reply::Type::array || reply.elements.size() != 3) return std::nullopt;
  for (const Reply& e : reply.elements) {
    if (e.type != Reply::Type::integer) return std::nullopt;
  }
  return ScriptAnswer{reply.elements[0].integer, reply.elements[1].integer,
                      reply.elements[2].integer == 1};
}

}  // namespace stockctl
