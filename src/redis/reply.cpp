#include "redis/reply.h"

#include <fmt/format.h>

namespace stockctl {

std::string Reply::error_code() const {
  if (!is_error()) return {};
  return str.substr(0, str.find(' '));
}

ErrorReply Reply::error_kind() const {
  return is_error() ? classify_error_reply(str) : ErrorReply::other;
}

std::optional<std::string> Reply::string_or_nil() const {
  if (type == Type::string || type == Type::status) return str;
  return std::nullopt;
}

std::string describe_reply(const Reply& reply) {
  switch (reply.type) {
    case Reply::Type::error:
      return reply.str;
    case Reply::Type::string:
      return fmt::format("string '{}'", reply.str);
    case Reply::Type::status:
      return fmt::format("status '{}'", reply.str);
    case Reply::Type::integer:
      return fmt::format("integer {}", reply.integer);
    case Reply::Type::array:
      return fmt::format("array of {}", reply.elements.size());
    case Reply::Type::nil:
      return "nil";
  }
  return "unknown reply";
}

}  // namespace stockctl
