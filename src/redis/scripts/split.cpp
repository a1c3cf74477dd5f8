#include "redis/scripts/split.h"

#include "core/sku.h"
#include "redis/scripts/registry.h"

namespace stockctl {
namespace {

// Every split step is written so that a resend after an unknown outcome changes nothing more
// (each op finds its own earlier write), and each is waited for by the replicas.
Call safe_write(Call call) {
  call.idempotent = true;
  call.writes = true;
  return call;
}

// The keys of the ops on a bucket's sold-out hint: the bucket, its moves hash, the hint's key
// and the adds running on it (lua/split_bucket-3.lua).
std::vector<std::string> hint_keys(const std::string& bucket) {
  return {bucket, bucket_moves_key(bucket), bucket_short_key(bucket), bucket_adds_key(bucket)};
}

}  // namespace

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
  return safe_write(Call::script_call(split_item_script(), std::move(keys), std::move(args)));
}

std::optional<Call> rebalance_entry_call(const std::string& key, std::int64_t moved,
                                         std::optional<std::int64_t> total,
                                         const ChangeLogSettings& log,
                                         const std::string& request_id) {
  if (!log.enabled) return std::nullopt;
  std::vector<std::string> keys{key, companion_key(key, kHoldsSuffix),
                                companion_key(key, kHeldSuffix), log_key(key)};
  std::vector<std::string> args{"rebalanced",
                                request_id,
                                std::to_string(moved),
                                total ? std::to_string(*total) : "",
                                std::to_string(log.max_entries),
                                log.actor,
                                log.reason};
  // Sent once: a resend after an unknown outcome could log the entry twice.
  Call call = Call::script_call(split_item_script(), std::move(keys), std::move(args));
  call.writes = true;
  return call;
}

Call keep_bucket_log_call(const std::string& key, const std::string& bucket,
                          const std::vector<std::string>& entries, long long max_entries) {
  std::vector<std::string> keys{key, companion_key(key, kHoldsSuffix),
                                companion_key(key, kHeldSuffix), log_key(key),
                                companion_key(key, kKeptLogsSuffix)};
  std::vector<std::string> args{"keep_log", bucket, "", "", std::to_string(max_entries), "", ""};
  args.insert(args.end(), entries.begin(), entries.end());
  return safe_write(Call::script_call(split_item_script(), std::move(keys), std::move(args)));
}

Call drain_bucket_call(const std::string& key, const std::string& gen) {
  return safe_write(
      Call::script_call(split_bucket_script(), {key, bucket_moves_key(key)}, {"drain", gen}));
}

Call send_units_call(const std::string& from, const std::string& id, std::int64_t units,
                     const std::string& to) {
  return safe_write(Call::script_call(split_bucket_script(),
                                      {from, bucket_moves_key(from), from + ":sent:" + id},
                                      {"send", id, std::to_string(units), to}));
}

Call confirm_transfer_call(const std::string& from, const std::string& id) {
  return safe_write(
      Call::script_call(split_bucket_script(), {from, bucket_moves_key(from)}, {"confirm", id}));
}

Call receive_units_call(const std::string& to, const std::string& id, std::int64_t units,
                        long long deadline) {
  return safe_write(
      Call::script_call(split_bucket_script(), {to, bucket_moves_key(to), receipt_key(to, id)},
                        {"receive", id, std::to_string(units), std::to_string(deadline)}));
}

Call add_mark_call(const std::string& bucket, const std::string& op, const std::string& nonce,
                   long long life_ms) {
  return safe_write(Call::script_call(split_bucket_script(), hint_keys(bucket),
                                      {op, nonce, std::to_string(life_ms)}));
}

Call sold_out_hint_call(const std::string& bucket, const std::string& seen, std::int64_t total,
                        long long life_ms, const std::string& nonce, long long peeked_ms) {
  return safe_write(Call::script_call(split_bucket_script(), hint_keys(bucket),
                                      {"hint", seen, std::to_string(total), std::to_string(life_ms),
                                       nonce, std::to_string(peeked_ms)}));
}

Call peek_hint_call(const std::string& bucket) {
  Call call = Call::script_call(split_bucket_script(), hint_keys(bucket), {"peek"});
  call.idempotent = true;  // reads only
  return call;
}

Call forget_receipt_call(const std::string& to, const std::string& id) {
  return Call::idempotent_write(
      {"EXPIRE", receipt_key(to, id), std::to_string(kReceiptLifeAfterFinishS)});
}

std::string receipt_key(const std::string& bucket, const std::string& id) {
  return bucket + ":in:" + id;
}

std::optional<SplitAnswer> parse_split_answer(const Reply& reply) {
  if (reply.type != Reply::Type::array || reply.elements.size() < 2) return std::nullopt;
  const Reply& status = reply.elements[0];
  if (status.type != Reply::Type::string) return std::nullopt;
  SplitAnswer answer{status.str, std::nullopt, {}};
  for (std::size_t i = 1; i < reply.elements.size(); ++i) {
    const Reply& element = reply.elements[i];
    std::optional<std::string> text =
        element.type == Reply::Type::integer
            ? std::optional<std::string>(std::to_string(element.integer))
            : element.string_or_nil();
    if (i == 1) {
      answer.value = std::move(text);
    } else {
      answer.more.push_back(text.value_or(""));
    }
  }
  return answer;
}

}  // namespace stockctl
