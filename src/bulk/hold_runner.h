#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/context.h"
#include "bulk/adjust_runner.h"
#include "core/exit_fold.h"
#include "core/hold_lines.h"
#include "core/outcome.h"
#include "options/options.h"

namespace stockctl {

enum class CartKind { hold, order };

/// "hold" or "order".
const char* kind_name(CartKind kind);

/// How long a hold lasts at most: a week (longer would be a reservation, not a hold).
inline constexpr long long kMaxExpireS = 7LL * 24 * 3600;

/// The options of `hold` and `order`.
struct HoldOptions {
  std::string id;
  bool id_given = false;           ///< even as '' (an unset variable), which is invalid
  std::vector<std::string> lines;  ///< SKU=QTY as typed
  SourceOptions source;
  InitSource init;
  LockTiming lock;
  long long expire_s = 600;
  long long request_ttl_s = 86400;
  long long ttl_s = 0;
};

/// One hold or order (or, on a cluster, one slot group of one) and what became of it.
struct Cart {
  std::string id;
  std::vector<HoldLine> lines;  ///< merged, ordered by SKU
  std::vector<std::string> keys;
  std::vector<Status> line_status;
  std::vector<std::optional<std::int64_t>> stock;
  Status status = Status::ok;
  /// When the hold expires; set once it is held (and kept when the cart fails afterwards, as
  /// one not acknowledged by --wait-replicas replicas does), unset while it is not.
  std::optional<std::int64_t> expires_at_ms;
  bool replayed = false;
  /// A replayed hold that is no longer held: what it became since ("released", "expired",
  /// "confirmed", "cancelled"); "" while it is held, and for an order.
  std::string since;
  std::string error;
  std::string record_key;  ///< where hold-4002.lua keeps the id's record
  std::string index_key;   ///< the index of items with holds it updates (same slot)
};

/// The answer line of a hold or order.
nlohmann::ordered_json cart_json(CartKind kind, const Cart& cart);

/// Marks `cart` as failed with `status` and why.
void fail(Cart& cart, Status status, std::string why);

/// Validates the id and the lines, merges them and sets the keys; on a problem the cart is
/// invalid and nothing will be sent.
void prepare_cart(Cart& cart, const KeyScheme& scheme);

/// The carts of `hold ID SKU=QTY...` (one) or of --file (rows with the same id form one).
/// Throws InputError when the file has invalid rows: nothing is sent then.
std::vector<Cart> carts_from_words(const HoldOptions& o, const KeyScheme& scheme);
std::vector<Cart> carts_from_file(const HoldOptions& o, const KeyScheme& scheme);

/// The per-line keys every hold script takes: stock, holds, held units, [log].
void append_line_keys(std::vector<std::string>& keys, const std::string& stock, bool log);

/// Runs hold-4002.lua for carts (each cart's record_key/index_key/id as given), with the init
/// lock protocol for lines whose key is missing.
class HoldRunner {
 public:
  /// `expire_ms`: how long the holds it makes last (an order's are never held).
  HoldRunner(Context& ctx, CartKind kind, const HoldOptions& o, long long expire_ms);

  /// Holds or orders each prepared cart (invalid ones are left as they are).
  void run(std::vector<Cart>& carts);

  /// With --wait-replicas: a cart held on the primary but acknowledged by fewer replicas is an
  /// error (the cluster protocol aborts such a group rather than decide on it).
  void require_acks() { require_acks_ = true; }

 private:
  Call call_for(const Cart& cart, const std::vector<std::string>& inits) const;
  void apply(Cart& cart, const CallResult& result) const;
  void apply_error(Cart& cart, const std::string& text) const;
  void check_acks(Cart& cart, const CallResult& result) const;
  void initialize(Cart& cart);

  Context& ctx_;
  CartKind kind_;
  const HoldOptions& o_;
  long long expire_ms_;
  InitialStock initial_;
  bool require_acks_ = false;
};

/// One line of a hold's or order's record.
struct RecordLine {
  std::string sku;
  std::string key;
  std::int64_t qty = 0;
};

/// The lines of a record ([sku, key, qty, ...] each, in JSON: a cluster cart's record, or a hold
/// script's record of the previous version), or nullopt when it is not one stockctl wrote.
std::optional<std::vector<RecordLine>> record_lines(const std::string& text);

/// The lines of the hold script's record (one string: after its first line and the kind,
/// "<sku>\t<key>\t<qty>" each; lua/hold-4002.lua, "The record"), or nullopt when it is not
/// one stockctl wrote.
std::optional<std::vector<RecordLine>> hold_record_lines(std::string_view text);

/// The answer line of confirm, release or cancel.
nlohmann::ordered_json settle_json(const std::string& action, const std::string& id, Status status,
                                   const std::vector<RecordLine>& lines,
                                   const std::vector<std::optional<std::int64_t>>& stocks,
                                   bool replayed, const std::string& error);

/// Prints the answer line of confirm, release or cancel of `id` (and, when the status calls for
/// one, its error line on stderr) and adds the status to `fold`: `expired` from release counts
/// as 0 (the units are back, which is what release asked for).
void print_settle(Context& ctx, const std::string& action, const std::string& id, Status status,
                  const std::vector<RecordLine>& lines,
                  const std::vector<std::optional<std::int64_t>>& stocks, bool replayed,
                  const std::string& error, ExitFold& fold);

/// "ok", "expired", ... as a settle script answers them ("released": a conflict, the confirm of
/// a released hold).
Status settle_status(const std::string& word);

/// Why `action` does not apply (the error text of a conflict answer, whose script word is
/// `word`: "conflict", or "released" for a confirm of a released hold); "" for other answers.
std::string settle_conflict(const std::string& action, const std::string& word);

/// The call of settle-4002.lua for `action` on the record at `record` with these lines.
Call settle_call(const Context& ctx, const std::string& record, const std::string& index,
                 const std::string& action, const std::string& id,
                 const std::vector<RecordLine>& lines);

}  // namespace stockctl
