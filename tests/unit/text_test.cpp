#include "base/text.h"

#include <doctest/doctest.h>

#include <string>

using namespace stockctl;

TEST_CASE("escape_control writes line breaks and other control characters as escapes") {
  CHECK(escape_control("a\nb") == "a\\nb");
  CHECK(escape_control("a\r\tb") == "a\\r\\tb");
  CHECK(escape_control("caf\xC3\xA9") == "caf\xC3\xA9");  // UTF-8 stays as it is
  CHECK(escape_control("\xFF\xFE!") == "\\xff\\xfe!");    // bytes that are not UTF-8 do not
  CHECK(escape_control(std::string("\x1b[31m", 5)) == "\\x1b[31m");
  CHECK(escape_control("\x7f") == "\\x7f");
  CHECK(escape_control(std::string("a\0b", 3)) == "a\\x00b");
}

TEST_CASE("escape_control is idempotent, so a message may be escaped where it is printed") {
  CHECK(escape_control(escape_control("a\nb\x01")) == "a\\nb\\x01");
}

TEST_CASE("escape_control leaves printable text and UTF-8 alone") {
  CHECK(escape_control("caf\xc3\xa9 {42}") == "caf\xc3\xa9 {42}");
}

TEST_CASE("quoted quotes short text whole") {
  CHECK(quote_value("42") == "'42'");
  CHECK(quote_value("a\nb") == "'a\\nb'");
  CHECK(quote_value(std::string(kShownBytes, 'x')) == "'" + std::string(kShownBytes, 'x') + "'");
}

TEST_CASE("quoted shortens long text and gives its length") {
  std::string sku(513, 'x');
  CHECK(quote_value(sku) == "'" + std::string(kShownBytes - 16, 'x') + "...' (513 bytes)");
}

TEST_CASE("shown_value names text without quotes, shortened as quote_value shortens it") {
  CHECK(shown_value("h\t1") == "h\\t1");
  CHECK(shown_value(std::string(300, 'x')) ==
        std::string(kShownBytes - 16, 'x') + "... (300 bytes)");
}

TEST_CASE("quoted never cuts a UTF-8 character in two") {
  std::string sku;
  while (sku.size() < 100) sku += "\xc3\xa9";  // é, two bytes each
  std::string s = quote_value(sku);
  CHECK(s == "'" + sku.substr(0, kShownBytes - 16) + "...' (100 bytes)");
  std::string odd = "x" + sku;  // the cut now falls inside a character: keep one byte less
  CHECK(quote_value(odd) == "'" + odd.substr(0, kShownBytes - 17) + "...' (101 bytes)");
}

TEST_CASE("valid_utf8 accepts UTF-8 and refuses stray, overlong and surrogate bytes") {
  CHECK(valid_utf8(""));
  CHECK(valid_utf8("plain"));
  CHECK(valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x93\xA6"));
  CHECK_FALSE(valid_utf8("\xFF\xFE"));
  CHECK_FALSE(valid_utf8("caf\xE9"));       // Latin-1
  CHECK_FALSE(valid_utf8("\xC0\xAF"));      // overlong
  CHECK_FALSE(valid_utf8("\xED\xA0\x80"));  // surrogate
  CHECK_FALSE(valid_utf8("\xE2\x82"));      // cut short
}
