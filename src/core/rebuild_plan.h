#pragma once

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
};

/// The put script's mode argument for these settings ("create", "force" or "peek").
std::string_view put_script_mode(const PutMode& mode);

/// Classifies the put script's verdict ("created", "kept", "replaced", "absent", "locked") for an
/// item whose export value is `value`, given what was stored before.
void apply_put_verdict(ItemResult& item, std::string_view verdict,
                       const std::optional<std::string>& previous, std::int64_t value,
                       const PutMode& mode);

}  // namespace stockctl
