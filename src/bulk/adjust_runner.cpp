#include "bulk/adjust_runner.h"

#include <fmt/format.h>

#include <array>
#include <ctime>
#include <vector>

#include "base/errors.h"
#include "base/interrupt.h"
#include "bulk/replica_ack.h"
#include "core/error_reply.h"
#include "core/quantity.h"
#include "core/sku.h"
#include "core/stock_index.h"
#include "proc/init_cmd.h"
#include "redis/errors.h"
#include "redis/scripts/stock.h"
#include "sources/open_source.h"

namespace stockctl {
namespace {

// The init command must finish a little before the lock expires, so that the key is created
// while the lock is still ours.
constexpr auto kLockMargin = std::chrono::milliseconds(200);

std::optional<Format> format_option(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return parse_format(name);
}

// True when `sku` has white space at either end (and something else in it).
bool padded(const std::string& sku) {
  const std::string_view trimmed = trim_white_space(sku);
  return !trimmed.empty() && trimmed.size() != sku.size();
}

}  // namespace

/// --init-from's source, read once when the first missing item needs it: the stock of every
/// row by SKU hash (see StockIndex), instead of a read of the whole file per missing item.
class InitFileIndex {
 public:
  InitFileIndex(const InitSource& init, const KeyScheme& scheme) : init_(init), scheme_(scheme) {
    try {
      // Kept open: standard input ("-") is read again from its spool, if at all.
      source_ =
          std::make_unique<Source>(init.file, format_option(init.format), init.columns.delimiter);
      name_ = source_->name();
      std::size_t rows = read([this](const StockRow& row, bool valid) {
        index_.add(row.sku, valid ? row.value : StockIndex::kInvalid);
      });
      if (!fatal_.empty() || !index_.seal()) return;
      std::size_t again = read([this](const StockRow& row, bool valid) {
        index_.add_exact(row.sku, valid ? row.value : StockIndex::kInvalid, row.line);
      });
      if (again != rows) {
        fatal_ = fmt::format("--init-from {}: the source changed between two reads", name_);
      }
    } catch (const InputError& e) {
      // The source itself is invalid (empty, a header without its columns): invalid input.
      fatal_ = e.what();
      fatal_status_ = Status::invalid;
    } catch (const StockctlError& e) {
      fatal_ = e.what();
    }
  }

  /// What a failed lookup of `sku` is: `invalid` when its row is (or its SKU has two rows),
  /// invalid input named by file and line; `error` otherwise (no row, an unreadable source).
  Status failure_status(const std::string& sku) {
    if (!fatal_.empty()) return fatal_status_;
    const StockIndex::Found::Kind kind = index_.find(sku).kind;
    return kind == StockIndex::Found::Kind::invalid || kind == StockIndex::Found::Kind::duplicate
               ? Status::invalid
               : Status::error;
  }

  /// The item's initial stock, or why there is none.
  ParsedNumber stock_of(const std::string& sku) {
    if (!fatal_.empty()) return {0, fatal_};
    const StockIndex::Found found = index_.find(sku);
    switch (found.kind) {
      case StockIndex::Found::Kind::value:
        return {found.value, {}};
      case StockIndex::Found::Kind::invalid:
        return {0, invalid_row(sku)};
      case StockIndex::Found::Kind::duplicate:
        return {0, fmt::format("--init-from {}:{}: duplicate SKU '{}' (first on line {})", name_,
                               found.line, sku, found.first_line)};
      case StockIndex::Found::Kind::none:
        break;
    }
    return {0, fmt::format("--init-from {}: no row for item '{}'", name_, sku)};
  }

 private:
  std::function<std::string(const std::vector<bool>&)> header_check() const {
    return [this](const std::vector<bool>& present) {
      return check_stock_header(present, init_.columns);
    };
  }

  // Calls `each(row, valid)` for every row whose SKU is valid; returns the number of rows.
  std::size_t read(const std::function<void(const StockRow&, bool)>& each) {
    std::size_t rows = 0;
    RecordHandler handler{
        header_check(), [&](Record& record) {
          if (record.fatal) {
            fatal_ = fmt::format("--init-from {}:{}: {}", name_, record.line, record.error);
            fatal_status_ = Status::invalid;  // its structure is broken: invalid input
            return false;
          }
          ++rows;
          StockRow row;
          const bool valid = interpret_stock_row(record, init_.columns, scheme_, row).empty();
          if (row.sku_valid) {
            each(row, valid);
          } else if (padded(row.sku)) {
            // The item's row with white space around its SKU: its lookup is told why it is
            // invalid (and of --trim), rather than that there is no row for it.
            row.sku = std::string(trim_white_space(row.sku));
            each(row, false);
          }
          return true;
        }};
    source_->read(stock_columns(init_.columns), handler);
    return rows;
  }

  // The problem of the SKU's first row, which the index knows is invalid: only now is the source
  // read again for it (a pipe cannot be, hence the plainer message to fall back on).
  std::string invalid_row(const std::string& sku) {
    std::string problem =
        fmt::format("--init-from {}: the row for item '{}' is invalid", name_, sku);
    RecordHandler handler{
        header_check(), [&](Record& record) {
          if (record.fatal) return false;
          StockRow row;
          std::string why = interpret_stock_row(record, init_.columns, scheme_, row);
          if (row.sku != sku && !(padded(row.sku) && trim_white_space(row.sku) == sku)) return true;
          if (!why.empty()) {
            problem = fmt::format("--init-from {}:{}: {}", name_, record.line, why);
          }
          return false;
        }};
    try {
      source_->read(stock_columns(init_.columns), handler);
    } catch (const StockctlError&) {
      // The first read worked; the plain message says enough.
    }
    return problem;
  }

  const InitSource& init_;
  const KeyScheme& scheme_;
  std::unique_ptr<Source> source_;
  std::string name_;
  std::string fatal_;
  Status fatal_status_ = Status::error;  ///< invalid when the source's structure is at fault
  StockIndex index_;
};

void validate_init_source(const InitSource& init) {
  int given = !init.value.empty() + !init.file.empty() + !init.command.empty();
  if (given > 1) {
    throw InputError("give at most one of --init-value, --init-from and --init-cmd");
  }
  if (!init.value.empty()) {
    ParsedNumber n = parse_stock_value(init.value);
    if (!n.ok()) throw InputError(fmt::format("--init-value: {}", n.error));
  }
}

void check_init_file(const InitSource& init, const std::string& source_file) {
  if (init.file.empty()) return;
  if (init.file == "-") {
    if (source_file == "-") {
      throw InputError("--init-from - and --file - cannot both read standard input");
    }
    return;
  }
  // What the first missing key would meet (a directory, a name whose format cannot be told, a
  // file that cannot be opened) is said now, not at the next cache loss.
  try {
    Source probe(init.file, format_option(init.format), init.columns.delimiter);
  } catch (const StockctlError& e) {
    throw InputError(fmt::format("--init-from: {}", e.what()));
  }
}

InitialStock::InitialStock(const InitSource& init, const KeyScheme& scheme)
    : init_(init), scheme_(scheme) {}

InitialStock::~InitialStock() = default;

ParsedNumber InitialStock::of(const std::string& sku,
                              std::chrono::steady_clock::time_point deadline) {
  if (!init_.value.empty()) return parse_stock_value(init_.value);
  if (!init_.file.empty()) {
    if (!index_) index_ = std::make_unique<InitFileIndex>(init_, scheme_);
    return index_->stock_of(sku);
  }
  return run_init_cmd(init_.command, sku, deadline);
}

Status InitialStock::failure_status(const std::string& sku) const {
  return index_ ? index_->failure_status(sku) : Status::error;
}

OpRunner::OpRunner(Client& client, Op op, const OpOptions& options, const KeyScheme& scheme)
    : client_(client), op_(op), options_(options), scheme_(scheme) {}

OpRunner::~OpRunner() = default;

Call OpRunner::call_for(const ItemResult& item, const std::string& init) const {
  StockRequest request{item.key,
                       op_ == Op::deduct ? "deduct" : "add",
                       *item.qty,
                       init,
                       options_.ttl_s,
                       item.request_id,
                       options_.request_ttl_s,
                       &log_};
  return stock_call(request);
}

void OpRunner::apply(ItemResult& item, const CallResult& result) const {
  if (result.state != CallResult::State::replied) {
    set_error(item, Status::error, result.error);
    item.stock.reset();
    return;
  }
  const Reply& r = result.reply;
  if (r.is_error()) {
    apply_error_reply(item, r.str);
    if (r.error_kind() == ErrorReply::wrongtype) name_wrong_type(item);
    return;
  }
  std::optional<StockAnswer> answer = parse_stock_answer(r);
  if (!answer) {
    return set_error(
        item, Status::error,
        fmt::format("unexpected reply from the {} script: {}", item.op, describe_reply(r)));
  }
  if (op_ == Op::deduct) {
    apply_deduct_answer(item, answer->answer, answer->stock);
  } else {
    apply_add_answer(item, answer->answer, answer->stock);
  }
  item.replayed = answer->replayed;
  if (item.status == Status::ok && !item.replayed)
    check_durability(item, result, client_.options());
}

void OpRunner::name_wrong_type(ItemResult& item) const {
  // The script does not say which key it met: the types of the keys it reads before it changes
  // anything, in the order it reaches them, tell (one round trip, on this error only).
  std::vector<KeyType> keys{{item.key, "", "string", "a stock value"}};
  if (!item.request_id.empty()) {
    const std::array<std::string, 3> ledgers =
        ledger_keys(item.key, options_.request_ttl_s, static_cast<long long>(std::time(nullptr)));
    for (const std::string& ledger : ledgers) {
      keys.push_back({ledger, "", "hash", "a request ledger"});
    }
  }
  std::vector<Call> calls;
  calls.reserve(keys.size());
  for (const KeyType& k : keys) calls.push_back(Call::read({"TYPE", k.key}));
  const std::vector<CallResult> types = client_.run(calls);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (types[i].state != CallResult::State::replied || types[i].reply.is_error()) return;
    keys[i].type = types[i].reply.str;
  }
  apply_wrong_type(item, keys);
}

void OpRunner::run(std::vector<ItemResult>& items) {
  // Sent and answered now, not through start() and finish(): a file's windows may be in flight
  // (a row on a split item merged meanwhile comes back here while its line is printed), and
  // finish() takes the oldest window started, which would be one of those.
  apply_replies(items, client_.run(calls_for(items)));
}

std::vector<Call> OpRunner::calls_for(const std::vector<ItemResult>& items) const {
  std::vector<Call> calls;
  calls.reserve(items.size());
  for (const ItemResult& item : items) {
    if (item.qty) calls.push_back(call_for(item, ""));
  }
  return calls;
}

void OpRunner::start(const std::vector<ItemResult>& items) { client_.start(calls_for(items)); }

void OpRunner::finish(std::vector<ItemResult>& items) { apply_replies(items, client_.finish()); }

void OpRunner::apply_replies(std::vector<ItemResult>& items,
                             const std::vector<CallResult>& results) {
  std::size_t next = 0;
  for (ItemResult& item : items) {
    if (item.qty) apply(item, results[next++]);
  }
  // Locks are taken only where a key is actually missing, and not once a stop was asked for.
  for (ItemResult& item : items) {
    if (!item.qty || !key_missing(item) || !can_initialize()) continue;
    if (interrupted()) {
      set_not_applied(item, interrupt_reason());
    } else {
      initialize(item);
    }
  }
}

void OpRunner::apply_once(ItemResult& item, const std::string& init) {
  std::vector<CallResult> results = client_.run({call_for(item, init)});
  apply(item, results[0]);
}

void OpRunner::initialize(ItemResult& item) {
  const std::string lock_key = companion_key(item.key, ":lock");
  const std::string token = new_lock_value();
  // Indexed before any lock is taken, so that reading a large file never holds one.
  if (!options_.init.file.empty() && !init_index_) {
    init_index_ = std::make_unique<InitFileIndex>(options_.init, scheme_);
  }
  try {
    // Between tries, run the operation again: another process may have created the key.
    LockWait wait = acquire_lock(client_, lock_key, token, options_.lock, [&] {
      apply_once(item, "");
      return !key_missing(item);
    });
    if (wait == LockWait::resolved) return;
    if (wait == LockWait::timed_out && interrupted()) {
      set_not_applied(item, interrupt_reason());
      return;
    }
    if (wait == LockWait::timed_out) {
      set_error(item, Status::busy,
                fmt::format("init lock still held by another process after {} ms: {}",
                            options_.lock.wait_ms, describe_held_lock(client_, lock_key)));
      return;
    }
    // Measured after SET NX returned, so slightly late; kLockMargin covers that round trip.
    auto lock_expiry =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.lock.ttl_ms);
    LockRelease release(client_, lock_key, token);
    initialize_locked(item, lock_expiry);
  } catch (const StockctlError& e) {
    set_error(item, Status::error, e.what());
    item.stock.reset();
  }
}

void OpRunner::initialize_locked(ItemResult& item,
                                 std::chrono::steady_clock::time_point lock_expiry) {
  // Double check under the lock: the key may have appeared between our miss and the lock.
  apply_once(item, "");
  if (!key_missing(item)) return;
  ParsedNumber init = initial_stock(item.sku, lock_expiry - kLockMargin);
  if (!init.ok()) {
    if (interrupted()) return set_not_applied(item, init.error);
    set_error(item, init_index_ ? init_index_->failure_status(item.sku) : Status::error,
              fmt::format("{}; nothing was created", init.error));
    return;
  }
  // The script creates the key only if it is still missing, then applies the operation.
  apply_once(item, std::to_string(init.value));
}

ParsedNumber OpRunner::initial_stock(const std::string& sku,
                                     std::chrono::steady_clock::time_point deadline) const {
  const InitSource& init = options_.init;
  if (!init.value.empty()) return parse_stock_value(init.value);
  if (init_index_) return init_index_->stock_of(sku);
  return run_init_cmd(init.command, sku, deadline);
}

}  // namespace stockctl
