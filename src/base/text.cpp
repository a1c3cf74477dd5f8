#include "base/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace stockctl {

bool same_name_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}
namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The length of the longest prefix of `text` of at most `max` bytes that ends on a UTF-8
// character boundary (a continuation byte is 10xxxxxx).
std::size_t utf8_prefix(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text.size();
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

}  // namespace

std::string escape_control(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (is_control(c)) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

namespace {

// `text` escaped and, when long, shortened, between `quote`s: "'abc'", "'abc...' (300 bytes)".
std::string shortened(std::string_view text, std::string_view quote) {
  if (text.size() <= kShownBytes) return fmt::format("{0}{1}{0}", quote, escape_control(text));
  std::size_t keep = utf8_prefix(text, kShownBytes - 16);
  return fmt::format("{0}{1}...{0} ({2} bytes)", quote, escape_control(text.substr(0, keep)),
                     text.size());
}

}  // namespace

std::string quote_value(std::string_view text) { return shortened(text, "'"); }

std::string shown_value(std::string_view text) { return shortened(text, ""); }

}  // namespace stockctl
