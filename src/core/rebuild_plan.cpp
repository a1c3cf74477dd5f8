#include "core/rebuild_plan.h"

#include <fmt/format.h>

#include "base/text.h"
#include "core/quantity.h"
#include "core/split_plan.h"

namespace stockctl {
namespace {

// The stock field shows the value as stored: unlimited shows as null.
std::optional<std::int64_t> shown(std::int64_t value) {
  if (value == kUnlimited) return std::nullopt;
  return value;
}

// A value written (or, in a dry run, that would be): ok, or unlimited as get says of it.
void written(ItemResult& item, std::int64_t value) {
  item.status = value == kUnlimited ? Status::unlimited : Status::ok;
  item.stock = shown(value);
}

void kept(ItemResult& item, std::int64_t stored, std::int64_t value, const PutMode& mode) {
  if (mode.force) {  // only reached in a dry run: the real run would overwrite
    written(item, value);
  } else if (stored == value || !mode.rebuild) {
    item.status = Status::exists;
    item.stock = shown(stored);
  } else {
    item.status = Status::drift;
    item.stock = shown(stored);
    item.expected = value;
  }
}

}  // namespace

std::string_view put_script_mode(const PutMode& mode) {
  if (mode.dry_run) return "peek";
  return mode.force ? "force" : "create";
}

void apply_put_verdict(ItemResult& item, std::string_view verdict,
                       const std::optional<std::string>& previous, std::int64_t value,
                       const PutMode& mode) {
  item.error.clear();
  item.stock.reset();
  item.expected.reset();
  std::optional<std::int64_t> stored;
  if (previous) stored = parse_stored_value(*previous);
  // "replaced" is ok even when the value was the same: the write was forced.
  if (verdict == "created" || verdict == "absent" || verdict == "replaced") {
    written(item, value);
  } else if (verdict == "locked") {
    set_error(item, Status::busy,
              fmt::format("{} is being initialized by another process (its init lock is held)",
                          item.key));
  } else if (verdict == "kept" && previous && is_split_record(*previous)) {
    // Not corrupt: a split item, which init and rebuild do not handle yet (docs/split.md).
    set_error(item, Status::error, split_item_refused(item.op, item.sku, *previous));
  } else if (verdict == "kept" && previous && !stored && !(mode.dry_run && mode.force)) {
    set_error(item, Status::error,
              fmt::format("stored value {} of {} is not a stock value; left unchanged (--force "
                          "overwrites it)",
                          quote_value(*previous), item.key));
  } else if (verdict == "kept" && previous) {
    kept(item, stored.value_or(kUnlimited - 1), value, mode);
  } else {
    set_error(item, Status::error,
              fmt::format("unexpected answer {} from the put script", quote_value(verdict)));
  }
  // Whatever --force writes (or, in a dry run, would write) says what it replaced, so that a
  // forced run never hides drift.
  item.forced = mode.force && is_written(item.status);
  item.previous = item.forced ? previous : std::nullopt;
}

namespace {

std::string value_text(std::optional<std::int64_t> value) {
  return value && *value != kUnlimited ? std::to_string(*value) : "unlimited";
}

}  // namespace

std::string finding_line(const ItemResult& item) {
  if (item.status == Status::drift) {
    return fmt::format("drift: item {}: {} holds {}, the source says {}", quote_value(item.sku),
                       item.key, value_text(item.stock), value_text(item.expected));
  }
  if (item.status == Status::extra) {
    return fmt::format("extra: item {}: {} is in Redis and the source has no row for it",
                       quote_value(item.sku), item.key);
  }
  return "";
}

std::string more_findings_line(Status status, std::size_t more, bool reported) {
  const char* items = more == 1 ? "item" : "items";
  return fmt::format("and {} more {} ({})", more,
                     status == Status::extra
                         ? fmt::format("extra {}", items)
                         : fmt::format("{} with {}", items, status_name(status)),
                     reported ? "--report lists every one" : "--report FILE lists every one");
}

}  // namespace stockctl
