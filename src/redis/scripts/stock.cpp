#include "redis/scripts/stock.h"

#include "core/sku.h"
#include "redis/scripts/registry.h"

namespace stockctl {

Call stock_call(const StockRequest& request) {
  const bool with_log = request.log != nullptr && request.log->enabled;
  std::vector<std::string> keys{request.key};
  if (!request.request_id.empty()) {
    keys.push_back(companion_key(request.key, std::string(kRequestSuffix) + request.request_id));
  }
  if (with_log) keys.push_back(log_key(request.key));
  std::vector<std::string> args{request.op, std::to_string(request.qty)};
  // The script takes absent trailing arguments as "" (none): each argument costs the server
  // time on every call, so a plain deduction sends the op and QTY alone.
  const bool with_id = !request.request_id.empty();
  if (!request.init.empty() || with_id || with_log) {
    args.insert(args.end(), {request.init, std::to_string(request.ttl_s)});
  }
  if (with_id || with_log) {
    args.insert(args.end(), {request.request_id, std::to_string(request.request_ttl_s)});
  }
  if (with_log) {
    args.insert(args.end(), {std::to_string(request.log->max_entries), request.log->actor,
                             request.log->reason});
  }
  Call call = Call::script_call(stock_script(), std::move(keys), std::move(args));
  call.idempotent = !request.request_id.empty();
  call.writes = true;
  return call;
}

std::optional<StockAnswer> parse_stock_answer(const Reply& reply) {
  // The common answer is one integer: the smallest reply the server can build and send.
  if (reply.type == Reply::Type::integer) return StockAnswer{reply.integer, reply.integer, false};
  if (reply.type != Reply::Type::array || reply.elements.size() != 3) return std::nullopt;
  for (const Reply& e : reply.elements) {
    if (e.type != Reply::Type::integer) return std::nullopt;
  }
  return StockAnswer{reply.elements[0].integer, reply.elements[1].integer,
                     reply.elements[2].integer == 1};
}

}  // namespace stockctl
