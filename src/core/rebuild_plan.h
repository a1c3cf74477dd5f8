#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/outcome.h"

namespace stockctl {

/// How init and rebuild write one item.
struct PutMode {
  bool rebuild = false;  ///< report a differing live value as drift (init says exists)
  bool force = false;    ///< overwrite live values
  bool dry_run = false;  ///< write nothing: the script only peeks

  /// init: a live value is left and reported as exists.
  static PutMode for_init() { return PutMode{}; }
  /// rebuild: a live value that differs is reported as drift.
  static PutMode for_rebuild() { return PutMode{true}; }
  /// The same mode, overwriting live values when `on` (--force).
  PutMode with_force(bool on) const { return PutMode{rebuild, on, dry_run}; }
  /// The same mode, writing nothing when `on` (--dry-run).
  PutMode with_dry_run(bool on) const { return PutMode{rebuild, force, on}; }
};

/// True for the statuses of a value written (or that a dry run would write): ok and unlimited.
inline bool is_written(Status status) {
  return status == Status::ok || status == Status::unlimited;
}

/// The put script's mode argument for these settings ("create", "force" or "peek").
std::string_view put_script_mode(const PutMode& mode);

/// Classifies the put script's verdict ("created", "kept", "replaced", "absent", "locked") for an
/// item whose export value is `value`, given what was stored before.
void apply_put_verdict(ItemResult& item, std::string_view verdict,
                       const std::optional<std::string>& previous, std::int64_t value,
                       const PutMode& mode);

/// What rebuild found about an item it did not write, for one line on standard error: for drift
/// "drift: item 'A': stock:{A} holds 5, the source says 7", for extra "extra: item 'X':
/// stock:{X} is in Redis and the source has no row for it"; "" for any other status.
std::string finding_line(const ItemResult& item);

/// Says how many findings of `status` (drift, extra) were not named one by one: "and 5 more
/// items with drift (--report lists every one)", "and 1 more extra item (...)"; `reported` says
/// whether --report was given.
std::string more_findings_line(Status status, std::size_t more, bool reported);

}  // namespace stockctl
