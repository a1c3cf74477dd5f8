#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error_reply.h"

namespace stockctl {

/// A Redis reply as a plain value, copied out of hiredis's reply as soon as it arrives.
struct Reply {
  enum class Type { string, array, integer, nil, status, error };
  Type type = Type::nil;
  long long integer = 0;
  std::string str;  ///< string, status and error text
  std::vector<Reply> elements;

  bool is_error() const { return type == Type::error; }
  bool is_nil() const { return type == Type::nil; }
  /// The error's code: its first word ("NOSCRIPT", "WRONGPASS", "STOCKCTL_CORRUPT", ...).
  std::string error_code() const;
  /// What the error means (core/error_reply.h); ErrorReply::other when the reply is no error.
  ErrorReply error_kind() const;
  /// The string value, or nullopt for nil.
  std::optional<std::string> string_or_nil() const;
};

/// Describes a reply for messages: the error text, or its type.
std::string describe_reply(const Reply& reply);

}  // namespace stockctl
