#pragma once

#include <string>

#include "redis/client.h"

namespace stockctl {

/// A call of lua/unlock-1.lua: deletes the lock at `key` only while it holds `token`. Safe to
/// resend: a second delete finds the token gone.
Call unlock_call(const std::string& key, const std::string& token);

/// A call of lua/extend-1.lua: pushes the lock's expiry to `ttl_ms` from now while it holds
/// `token`. Safe to resend.
Call extend_call(const std::string& key, const std::string& token, long long ttl_ms);

/// Whether the extend script's reply says the lock was still held (and is now extended).
bool parse_extend_answer(const Reply& reply);

}  // namespace stockctl
