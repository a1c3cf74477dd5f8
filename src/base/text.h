#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stockctl {

/// The most bytes of a piece of user data that a message quotes before shortening it.
inline constexpr std::size_t kShownBytes = 64;

/// `text` with every control character written as an escape (\n, \r, \t, \x1b, ...), so that a
/// message built from user data stays on one line and shows what the data holds. Escaping twice
/// changes nothing more: a message may be escaped again where it is printed.
std::string escape_control(std::string_view text);

/// `text` as a message quotes it: escaped, in single quotes, and when longer than kShownBytes
/// shortened to its first bytes (never cutting a UTF-8 character) followed by "... (N bytes)".
std::string quote_value(std::string_view text);

/// `text` as a message names it without quotes (a hold's id after its command: "release h1:
/// ..."): escaped, and shortened as quote_value shortens it.
std::string shown_value(std::string_view text);

/// The length of the valid UTF-8 sequence at text[i], or 0 when it is not one (overlong forms,
/// surrogates and code points past U+10FFFF are invalid).
std::size_t utf8_length(std::string_view text, std::size_t i);

/// Whether `text` is valid UTF-8 throughout.
bool valid_utf8(std::string_view text);

/// Whether `text` begins with `head`.
inline bool starts_with(std::string_view text, std::string_view head) {
  return text.substr(0, head.size()) == head;
}

/// Whether `text` ends with `tail`.
inline bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

/// Whether two names are the same letters, ignoring ASCII case (a source's column names).
bool same_name_ignoring_case(std::string_view a, std::string_view b);

}  // namespace stockctl
