#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error_reply.h"

namespace stockctl {

/// A Redis reply as a plain value, parsed straight from the bytes a connection received.
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

/// What parse_reply found at the front of the bytes received.
enum class ReplyParse {
  complete,  ///< one whole reply, now in `out`
  partial,   ///< the start of a reply: wait for more bytes
  invalid,   ///< not RESP2: `out.str` says why
};

/// Parses one RESP2 reply (simple string, error, integer, bulk string, array, nils) from the
/// front of `data` into `out`; when complete, `used` is its length in bytes. A bulk load reads a
/// reply per row: this costs a tenth of hiredis's reader with its reply objects and their copy.
ReplyParse parse_reply(std::string_view data, Reply& out, std::size_t& used);

}  // namespace stockctl
