#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "bulk/adjust_runner.h"
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

/// A --file source that failed validation: nothing is sent, but each invalid row (and then
/// each invalid cart) has its answer line, with status invalid and the error naming the file
/// and line (or id), as deduct --file prints its invalid rows.
class InvalidCarts : public InputError {
 public:
  InvalidCarts(const std::string& why, std::vector<Cart> refused)
      : InputError(why), refused_(std::move(refused)) {}
  /// The answers to print, in the order of the source.
  const std::vector<Cart>& refused() const { return refused_; }

 private:
  std::vector<Cart> refused_;
};

/// The carts of `hold ID SKU=QTY...` (one) or of --file (rows with the same id form one).
/// carts_from_file throws InvalidCarts when the file has invalid rows or ids: nothing is sent
/// then.
std::vector<Cart> carts_from_words(const HoldOptions& o, const KeyScheme& scheme);
std::vector<Cart> carts_from_file(const HoldOptions& o, const KeyScheme& scheme);

}  // namespace stockctl
