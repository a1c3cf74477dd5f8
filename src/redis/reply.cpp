#include "redis/reply.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>

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

namespace {

// Deeper nesting than any reply stockctl asks for (CLUSTER SLOTS has 3 levels) means a broken
// stream; the bound also keeps the recursion's stack small.
constexpr int kMaxDepth = 16;

class RespParser {
 public:
  explicit RespParser(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}

  std::size_t used(std::string_view data) const {
    return static_cast<std::size_t>(p_ - data.data());
  }

  ReplyParse parse(Reply& out, int depth) {
    if (p_ == end_) return ReplyParse::partial;
    const char type = *p_;
    const char* eol = line_end(p_ + 1);
    if (eol == nullptr) return ReplyParse::partial;
    const std::string_view line(p_ + 1, static_cast<std::size_t>(eol - p_ - 1));
    switch (type) {
      case '+':
      case '-':
        out.type = type == '+' ? Reply::Type::status : Reply::Type::error;
        out.str.assign(line);
        p_ = eol + 2;
        return ReplyParse::complete;
      case ':':
        if (!number(line, out.integer)) return invalid(out, "bad integer");
        out.type = Reply::Type::integer;
        p_ = eol + 2;
        return ReplyParse::complete;
      case '$':
        return bulk(out, line, eol);
      case '*':
        return array(out, line, eol, depth);
      default:
        return invalid(out, fmt::format("got '{}' as reply type byte", type));
    }
  }

 private:
  // The "\r\n" that ends the line starting at `from`, or null when it has not arrived yet.
  const char* line_end(const char* from) const {
    while (from < end_) {
      const auto* cr =
          static_cast<const char*>(std::memchr(from, '\r', static_cast<std::size_t>(end_ - from)));
      if (cr == nullptr || cr + 1 == end_) return nullptr;
      if (cr[1] == '\n') return cr;
      from = cr + 1;
    }
    return nullptr;
  }

  static bool number(std::string_view text, long long& value) {
    if (text.empty()) return false;
    const char* first = text.data();
    const char* last = first + text.size();
    auto [ptr, ec] = std::from_chars(first, last, value);
    return ec == std::errc() && ptr == last;
  }

  static ReplyParse invalid(Reply& out, std::string why) {
    out.str = std::move(why);
    return ReplyParse::invalid;
  }

  ReplyParse bulk(Reply& out, std::string_view line, const char* eol) {
    long long size = 0;
    if (!number(line, size) || size < -1) return invalid(out, "bad bulk string length");
    if (size == -1) {
      out.type = Reply::Type::nil;
      p_ = eol + 2;
      return ReplyParse::complete;
    }
    const char* body = eol + 2;
    const auto length = static_cast<std::size_t>(size);
    if (static_cast<std::size_t>(end_ - body) < length + 2) return ReplyParse::partial;
    if (body[length] != '\r' || body[length + 1] != '\n') {
      return invalid(out, "bulk string not followed by CRLF");
    }
    out.type = Reply::Type::string;
    out.str.assign(body, length);
    p_ = body + length + 2;
    return ReplyParse::complete;
  }

  ReplyParse array(Reply& out, std::string_view line, const char* eol, int depth) {
    long long count = 0;
    if (!number(line, count) || count < -1) return invalid(out, "bad array length");
    p_ = eol + 2;
    if (count == -1) {
      out.type = Reply::Type::nil;
      return ReplyParse::complete;
    }
    if (depth >= kMaxDepth) return invalid(out, "replies nested too deeply");
    out.type = Reply::Type::array;
    // Every element takes at least 4 bytes (":0\r\n"): a count the bytes received cannot hold
    // reserves no more than they could.
    const auto room = static_cast<long long>(end_ - p_) / 4 + 1;
    out.elements.reserve(static_cast<std::size_t>(std::min(count, room)));
    for (long long i = 0; i < count; ++i) {
      Reply& element = out.elements.emplace_back();
      if (ReplyParse r = parse(element, depth + 1); r != ReplyParse::complete) {
        if (r == ReplyParse::invalid) out.str = std::move(element.str);
        return r;
      }
    }
    return ReplyParse::complete;
  }

  const char* p_;
  const char* end_;
};

}  // namespace

ReplyParse parse_reply(std::string_view data, Reply& out, std::size_t& used) {
  RespParser parser(data);
  const ReplyParse result = parser.parse(out, 0);
  if (result == ReplyParse::complete) used = parser.used(data);
  return result;
}

}  // namespace stockctl
