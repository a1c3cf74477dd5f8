#include "base/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace stockctl {

std::size_t utf8_length(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  std::size_t n = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  if (c == 0xE0 && byte(i + 1) < 0xA0) return 0;  // overlong
  if (c == 0xED && byte(i + 1) > 0x9F) return 0;  // surrogate
  if (c == 0xF0 && byte(i + 1) < 0x90) return 0;  // overlong
  if (c == 0xF4 && byte(i + 1) > 0x8F) return 0;  // past U+10FFFF
  return n;
}

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

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
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (is_control(c)) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c >= 0x80) {
      // A UTF-8 character as it is; a byte that starts none escaped, so that a terminal shows
      // what is there rather than a replacement character.
      const std::size_t n = utf8_length(text, i);
      if (n == 0) {
        out += fmt::format("\\x{:02x}", c);
      } else {
        out.append(text, i, n);
        i += n - 1;
      }
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
