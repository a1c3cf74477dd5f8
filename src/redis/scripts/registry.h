#pragma once

#include "redis/script.h"

namespace stockctl {

/// The embedded scripts, by role.
const Script& stock_script();
const Script& put_script();
const Script& unlock_script();
const Script& extend_script();

}  // namespace stockctl
