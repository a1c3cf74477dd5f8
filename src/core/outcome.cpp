#include "core/outcome.h"

#include <fmt/format.h>

#include "base/text.h"
#include "core/error_reply.h"
#include "core/quantity.h"
#include "core/sku.h"
#include "core/split_plan.h"

namespace stockctl {

std::string_view status_name(Status status) {
  switch (status) {
    case Status::ok:
      return "ok";
    case Status::unlimited:
      return "unlimited";
    case Status::insufficient:
      return "insufficient";
    case Status::uninitialized:
      return "uninitialized";
    case Status::missing:
      return "missing";
    case Status::exists:
      return "exists";
    case Status::drift:
      return "drift";
    case Status::extra:
      return "extra";
    case Status::expired:
      return "expired";
    case Status::busy:
      return "busy";
    case Status::conflict:
      return "conflict";
    case Status::invalid:
      return "invalid";
    case Status::error:
      return "error";
  }
  return "error";
}

void apply_deduct_answer(ItemResult& item, std::int64_t answer, std::int64_t stock) {
  item.error.clear();
  item.stock.reset();
  if (answer == -3) {
    item.status = Status::uninitialized;
  } else if (answer == -2) {
    item.status = Status::insufficient;
    item.stock = stock;
  } else if (answer == -1) {
    item.status = Status::unlimited;
  } else if (answer >= 0) {
    item.status = Status::ok;
    item.stock = answer;
  } else {
    set_error(item, Status::error, fmt::format("unexpected script answer {}", answer));
  }
}

void apply_add_answer(ItemResult& item, std::int64_t answer, std::int64_t stock) {
  item.error.clear();
  item.stock.reset();
  // A restock of a key that is gone is refused as the key missing (exit 4), never turned into a
  // key holding just QTY: after a cache loss the real stock is elsewhere.
  if (answer == -3) {
    item.status = Status::missing;
  } else if (answer == -1) {
    item.status = Status::unlimited;
  } else if (answer >= 0) {
    item.status = Status::ok;
    item.stock = stock;
  } else {
    set_error(item, Status::error, fmt::format("unexpected script answer {}", answer));
  }
}

void apply_stored_value(ItemResult& item, const std::optional<std::string>& raw) {
  item.stock.reset();
  if (!raw) {
    item.status = Status::missing;
    return;
  }
  auto value = parse_stored_value(*raw);
  if (!value && is_split_record(*raw)) {
    set_error(item, Status::error, split_item_refused(item.op, item.sku, *raw));
  } else if (!value) {
    set_error(item, Status::error,
              fmt::format("stored value {} of {} is not a stock value; left unchanged",
                          quote_value(*raw), item.key));
  } else if (*value == kUnlimited) {
    item.status = Status::unlimited;
  } else {
    item.status = Status::ok;
    item.stock = *value;
  }
}

void set_error(ItemResult& item, Status status, std::string message) {
  item.status = status;
  item.error = std::move(message);
}

namespace {

constexpr std::string_view kNotApplied = "not applied: ";
constexpr std::string_view kOutcomeUnknown = "outcome unknown: ";

std::string say_once(std::string_view words, std::string_view why) {
  if (why.substr(0, kNotApplied.size()) == kNotApplied ||
      why.substr(0, kOutcomeUnknown.size()) == kOutcomeUnknown) {
    return std::string(why);
  }
  std::string out(words);
  out += why;
  return out;
}

}  // namespace

std::string not_applied(std::string_view why) { return say_once(kNotApplied, why); }

std::string outcome_unknown(std::string_view why) { return say_once(kOutcomeUnknown, why); }

void set_not_applied(ItemResult& item, const std::string& why) {
  set_error(item, Status::error, not_applied(why));
  item.stock.reset();
}

}  // namespace stockctl

namespace stockctl {
namespace {

// The ledger keeps "<op> <qty> <stock before>" for a request id (with " -2" after it when the
// operation was insufficient; lua/stock-2.lua); a person needs only the first two, in words.
std::string earlier_use(const std::string& record) {
  auto space = record.find(' ');
  if (space == std::string::npos) return "another operation";
  auto end = record.find(' ', space + 1);
  return fmt::format("{} {}", escape_control(record.substr(0, space)),
                     escape_control(record.substr(space + 1, end - space - 1)));
}

}  // namespace

std::string_view items_prefix_of(std::string_view key) {
  if (key.rfind("stockctl:", 0) == 0) {
    const std::size_t kind_end = key.find(':', 9);
    key = kind_end == std::string_view::npos ? std::string_view() : key.substr(kind_end + 1);
  }
  const std::size_t brace = key.find('{');
  return brace == std::string_view::npos ? std::string_view() : key.substr(0, brace);
}

std::string error_naming_item(const ItemResult& item) {
  if (item.sku.empty()) return item.error;
  if (starts_with(item.error, "item " + quote_value(item.sku))) return item.error;
  return fmt::format("item '{}': {}", escape_control(item.sku), item.error);
}

std::string log_lost_message(std::string_view log_key) {
  return fmt::format(
      "applied, but its change log entry was not written: {} holds another kind of value than the "
      "change log (a list; WRONGTYPE); the change stays: see stockctl get before you run it "
      "again (with a request id, the same id answers it); look at the key with redis-cli TYPE "
      "and remove it if it is not stockctl's",
      escape_control(log_key));
}

std::string log_lost_warning(std::string_view log_key) {
  return fmt::format(
      "its change log entry was not written: {} holds another kind of value than the change log "
      "(a list; WRONGTYPE); look at the key with redis-cli TYPE and remove it if it is not "
      "stockctl's",
      escape_control(log_key));
}

std::string lost_log_key(std::string_view error_text) {
  if (classify_error_reply(error_text) != ErrorReply::stockctl_log_lost) return "";
  const std::size_t space = error_text.find(' ');
  return space == std::string_view::npos ? "" : std::string(error_text.substr(space + 1));
}

void apply_error_reply(ItemResult& item, const std::string& text) {
  std::string code = text.substr(0, text.find(' '));
  std::string rest = text.size() > code.size() ? text.substr(code.size() + 1) : std::string();
  item.stock.reset();
  const ErrorReply kind = classify_error_reply(text);
  if (kind == ErrorReply::stockctl_conflict) {
    set_error(item, Status::conflict,
              fmt::format("request id {} was already used for {} on this item; nothing changed",
                          quote_value(item.request_id), earlier_use(rest)));
  } else if (kind == ErrorReply::stockctl_corrupt && is_split_record(rest)) {
    // A command that does not handle split items yet met one (docs/split.md, "Failing closed").
    set_error(item, Status::error, split_item_refused(item.op, item.sku, rest));
  } else if (kind == ErrorReply::stockctl_corrupt) {
    set_error(item, Status::error,
              fmt::format("stored value {} of {} is not a stock value; left unchanged",
                          quote_value(rest), item.key));
  } else if (kind == ErrorReply::stockctl_log_lost) {
    set_error(item, Status::error, log_lost_message(rest));
  } else if (kind == ErrorReply::stockctl_overflow) {
    set_error(item, Status::error,
              fmt::format("adding {} to {} (stock {}) would pass {}; nothing changed",
                          item.qty.value_or(0), item.key, escape_control(rest), kMaxStock));
  } else if (kind == ErrorReply::moved || kind == ErrorReply::ask) {
    set_error(item, Status::error,
              fmt::format("the server answered {}: it is a Redis Cluster node; use --cluster",
                          quote_value(text)));
  } else if (kind == ErrorReply::noperm) {
    set_error(item, Status::error, error_on(item.key, text, items_prefix_of(item.key)));
  } else if (not_executed(kind)) {
    // CLUSTERDOWN, TRYAGAIN, LOADING, READONLY, MASTERDOWN: refused before the command ran
    // (retried until --retry-timeout): a write did not happen.
    std::string refused =
        fmt::format("{}: refused before it ran: {}", item.key, escape_control(text));
    set_error(item, Status::error, item.op == "get" ? refused : not_applied(refused));
  } else if (kind == ErrorReply::wrongtype) {
    // Another program wrote a key of stockctl's with another type (a list where the stock is):
    // it is the operator's to look at, as doctor says. (A change log of another type is
    // STOCKCTL_LOG_LOST, above: the scripts skip its entry and finish their change.)
    set_error(item, Status::error,
              item.op == "get"
                  ? fmt::format("{} holds another kind of value than a stock value (WRONGTYPE); "
                                "look at it with redis-cli TYPE",
                                item.key)
                  : fmt::format("{} or one of its companion keys holds another kind of value "
                                "than stockctl keeps there (WRONGTYPE): look at them with "
                                "redis-cli TYPE and remove what is not stockctl's",
                                item.key));
  } else {
    set_error(item, Status::error,
              fmt::format("redis error on {}: {}", item.key,
                          escape_control(without_script_location(text))));
  }
}

bool apply_wrong_type(ItemResult& item, const std::vector<KeyType>& keys) {
  for (const KeyType& k : keys) {
    if (k.type == "none" || k.type == k.expected) continue;
    item.stock.reset();
    set_error(item, Status::error,
              fmt::format("{} holds a {}, not {} (a {}; WRONGTYPE); nothing changed; look at "
                          "it with redis-cli TYPE and remove it if it is not stockctl's",
                          k.key, k.type, k.what, k.expected));
    return true;
  }
  return false;
}

}  // namespace stockctl
