#include "redis/scripts/stock.h"

#include <ctime>

#include "core/sku.h"
#include "redis/scripts/registry.h"

namespace stockctl {

Call stock_call(const StockRequest& request) {
  const bool with_log = request.log != nullptr && request.log->enabled;
  const bool with_id = !request.request_id.empty();
  std::vector<std::string> keys{request.key};
  if (with_id) {
    // Generations of --request-ttl seconds: the script looks the id up in the current, the
    // previous and the next one, and records it in the current one (lua/stock-2.lua, "The
    // ledger"; the next one is where a caller whose clock runs ahead recorded it).
    const long long now =
        request.now_s > 0 ? request.now_s : static_cast<long long>(std::time(nullptr));
    for (std::string& ledger : ledger_keys(request.key, request.request_ttl_s, now)) {
      keys.push_back(std::move(ledger));
    }
  }
  if (with_log) keys.push_back(log_key(request.key));
  std::vector<std::string> args{request.op, std::to_string(request.qty)};
  // The script takes absent trailing arguments as "" (none): each argument costs the server
  // time on every call, so a plain deduction sends the op and QTY alone, and the id's two
  // come before the initial stock's, which a call rarely needs.
  const bool with_init = !request.init.empty();
  const bool with_flag = request.short_unrecorded;
  if (with_id || with_init || with_log || with_flag) {
    args.insert(args.end(), {request.request_id,
                             with_id ? std::to_string(2 * request.request_ttl_s) : std::string()});
  }
  if (with_init || with_log || with_flag) {
    args.insert(args.end(), {request.init, std::to_string(request.ttl_s)});
  }
  if (with_log || with_flag) {
    args.insert(args.end(), {with_log ? std::to_string(request.log->max_entries) : std::string(),
                             with_log ? request.log->actor : std::string(),
                             with_log ? request.log->reason : std::string()});
  }
  if (with_flag) args.emplace_back("short-unrecorded");
  Call call = Call::script_call(stock_script(), std::move(keys), std::move(args));
  call.idempotent = !request.request_id.empty();
  call.writes = true;
  call.resend_unconfirmed = call.idempotent;
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
