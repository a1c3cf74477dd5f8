#include "redis/scripts/cart.h"

#include <algorithm>

#include "core/error_reply.h"
#include "redis/errors.h"
#include "redis/scripts/registry.h"

namespace stockctl {

Call cart_call(const std::string& record, const std::string& due, const std::string& op,
               const std::string& id, std::vector<std::string> args) {
  args.insert(args.begin(), {op, id});
  Call call = Call::script_call(cart_script(), {record, due}, std::move(args));
  call.idempotent = true;  // every op answers the same when sent again
  call.writes = true;
  return call;
}

CartReply parse_cart_reply(const Reply& r) {
  CartReply out;
  if (r.error_kind() == ErrorReply::stockctl_conflict) {
    out.record = CartRecord{};
    out.record->conflict = r.str;
    return out;
  }
  const std::optional<CartState> state = r.type == Reply::Type::array && r.elements.size() == 7
                                             ? parse_cart_state(r.elements[0].str)
                                             : std::nullopt;
  if (!state) {
    out.unexpected = describe_reply(r);
    return out;
  }
  CartRecord rec;
  rec.state = *state;
  rec.attempt = r.elements[1].integer;
  rec.exp = r.elements[2].integer;
  rec.finished = r.elements[3].integer == 1;
  rec.lines = r.elements[4].str;
  rec.status = r.elements[5].str;
  rec.replayed = r.elements[6].integer == 1;
  out.record = std::move(rec);
  return out;
}

Call carts_due_call(const std::string& due, int batch) {
  Call call = Call::script_call(carts_due_script(), {due}, {std::to_string(batch)});
  call.idempotent = true;  // a read
  return call;
}

std::optional<std::vector<std::string>> parse_carts_due(const Reply& reply) {
  if (reply.type != Reply::Type::array) return std::nullopt;
  std::vector<std::string> ids;
  ids.reserve(reply.elements.size());
  for (const Reply& id : reply.elements) ids.push_back(id.str);
  return ids;
}

Call tombstone_call(const std::string& group_record, const std::string& canon, long long keep_s) {
  Call call = Call::script_call(tombstone_script(), {group_record},
                                {canon, std::to_string(std::max(keep_s, 60LL))});
  call.idempotent = true;  // a second call finds the tombstone, or the record
  call.writes = true;
  return call;
}

std::optional<bool> parse_never_held(const Reply& reply) {
  if (reply.type != Reply::Type::integer) return std::nullopt;
  return reply.integer != 0;
}

}  // namespace stockctl
