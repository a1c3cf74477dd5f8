#pragma once

#include "core/role.h"
#include "redis/connection.h"
#include "redis/reply.h"

namespace stockctl {

/// ROLE's reply as a Role (the one parser: parse_role in core/role.h).
Role role_of(const Reply& reply);

/// Asks the server on `conn` for its ROLE, as the next reply on it. Throws ConnectionError.
Role ask_role(Connection& conn);

}  // namespace stockctl
