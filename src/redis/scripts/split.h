#pragma once

// The calls of a split or merge (docs/split.md): lua/split_item-4.lua on the item's stock key,
// lua/split_bucket-3.lua on a bucket (drain, send and receive units); their headers are the
// contracts.

#include <optional>
#include <string>

#include "core/change_log.h"
#include "core/split_layout.h"
#include "redis/client.h"

namespace stockctl {

/// One step of split_item-4 on the item whose stock key is `key`.
struct SplitItemRequest {
  std::string key;
  std::string op;          ///< "begin", "drained" or "commit"
  std::string expected;    ///< "plain" (begin from a number) or the layout record read
  BucketLayout target;     ///< begin: the new layout (plain: merge)
  std::int64_t units = 0;  ///< drained: the drained buckets' units together
  const ChangeLogSettings* log = nullptr;  ///< the change log to write; null or disabled: none
};

/// The call for `request`. Each op checks the state it expects, so a resend after an unknown
/// outcome answers "changed" and the caller reads the item again: safe to resend.
Call split_item_call(const SplitItemRequest& request);

/// The call that logs a "rebalance" entry on the item `key` (nullptr when `log` is off):
/// `moved` units went between its buckets, its total then `total` (nullopt: not read), for the
/// deduction with `request_id` ("": a rebalance). Sent once: a resend after an unknown outcome
/// could log the entry twice.
std::optional<Call> rebalance_entry_call(const std::string& key, std::int64_t moved,
                                         std::optional<std::int64_t> total,
                                         const ChangeLogSettings& log,
                                         const std::string& request_id = "");

/// The call that adds `entries` (a bucket's change log, about to be deleted with the bucket)
/// to the log of the item `key`, merged by time, each once, the list trimmed to `max_entries`:
/// safe to resend.
Call keep_bucket_log_call(const std::string& key, const std::string& bucket,
                          const std::vector<std::string>& entries, long long max_entries);

/// The call that drains bucket `key` of a layout of generation `gen`: safe to resend (a drained
/// bucket answers its recorded units again).
Call drain_bucket_call(const std::string& key, const std::string& gen);

/// The call that takes `units` out of bucket `from` for a transfer `id` to bucket `to`,
/// recording it at `from`: safe to resend (a repeat of `id` answers ok while the record is
/// there, writing it again, and "finished" once it is gone, taking nothing either way).
Call send_units_call(const std::string& from, const std::string& id, std::int64_t units,
                     const std::string& to);

/// The call that writes transfer `id`'s record at bucket `from` again, so that a WAIT after it
/// confirms the record (and the units' departure) is on `from`'s replicas: answers "ok" with
/// the server's clock, or "gone". Sent by a process finishing a transfer another one sent.
Call confirm_transfer_call(const std::string& from, const std::string& id);

/// How long after a send or confirm (the source's clock) a receive is still accepted.
constexpr long long kReceiveWindowS = 300;

/// How long a receipt lives once its transfer's record is gone: longer than any receive
/// accepted before then can still arrive: kReceiveWindowS, and a destination clock behind the
/// source's by up to 25 minutes (one ahead by more than kReceiveWindowS refuses receives).
constexpr long long kReceiptLifeAfterFinishS = 1800;

/// The call that adds the `units` of transfer `id` to bucket `to`, once, unless `to`'s clock
/// has passed `deadline` (Unix seconds): safe to resend.
Call receive_units_call(const std::string& to, const std::string& id, std::int64_t units,
                        long long deadline);

/// The call that leaves the sold-out hint `total` at `bucket` for `life_ms`, only if the hint's
/// key still holds `seen` (what it held before the buckets were read; "" for nothing) and no
/// add is running: answers "ok" or "stale" (docs/split.md, "A sold-out item stays cheap").
Call sold_out_hint_call(const std::string& bucket, const std::string& seen, std::int64_t total,
                        long long life_ms, const std::string& nonce, long long peeked_ms);

/// The call that reads what `bucket`'s hint key holds, with the server's time in ms: answers
/// {"ok", value or "", ms}. A proof's first read, whose time the hint's compare-and-set checks.
Call peek_hint_call(const std::string& bucket);

/// The call that registers ("adding") or unregisters ("added") the add `nonce` at `bucket`: a
/// running add keeps sold-out hints away (for at most `life_ms`), and each writes a word of its
/// own into the hint's key. Safe to resend.
Call add_mark_call(const std::string& bucket, const std::string& op, const std::string& nonce,
                   long long life_ms);

/// The call that gives transfer `id`'s receipt at `to` its expiry, once the record at the
/// source is gone and that is confirmed.
Call forget_receipt_call(const std::string& to, const std::string& id);

/// The receipt of transfer `id` at bucket `bucket`.
std::string receipt_key(const std::string& bucket, const std::string& id);

/// Both scripts' answer: {status, value, ...}. value is nullopt for nil (missing); `more` holds
/// the elements after it (drain's "moving": the rest of the transfers' fields and values).
struct SplitAnswer {
  std::string status;
  std::optional<std::string> value;
  std::vector<std::string> more;
};

/// Reads a non-error reply of either script; nullopt when it has another shape.
std::optional<SplitAnswer> parse_split_answer(const Reply& reply);

}  // namespace stockctl
