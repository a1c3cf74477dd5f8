#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stockctl {

/// True when a Redis URL (or anything given where one is expected) carries a password: in its
/// user-info part (`user:password@`, any scheme, several hosts included) or in a query
/// parameter whose name mentions a password, an auth or a secret.
bool url_carries_password(std::string_view url);

/// True when the environment entry `NAME=VALUE` is one of stockctl's secrets, which no child
/// process inherits: STOCKCTL_PASSWORD, REDISCLI_AUTH, STOCKCTL_SENTINEL_PASSWORD, and
/// STOCKCTL_URL / REDIS_URL when they carry a password.
bool is_withheld_from_children(std::string_view entry);

/// The environment of a child process: `parent` (`NAME=VALUE` entries) without stockctl's
/// secrets (every copy of them), with `set` added and replacing any entry of the same name.
std::vector<std::string> child_environment(
    const std::vector<std::string>& parent,
    const std::vector<std::pair<std::string, std::string>>& set = {});

/// This process's environment, as `NAME=VALUE` entries.
std::vector<std::string> current_environment();

}  // namespace stockctl
