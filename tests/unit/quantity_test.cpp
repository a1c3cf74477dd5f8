#include "core/quantity.h"

#include <doctest/doctest.h>

#include <string>

using namespace stockctl;

TEST_CASE("parse_qty accepts 1 through 2^53-1") {
  CHECK(parse_qty("1").value == 1);
  CHECK(parse_qty(" 42 ").value == 42);
  CHECK(parse_qty("007").value == 7);
  CHECK(parse_qty("9007199254740991").value == kMaxStock);
}

TEST_CASE("parse_qty rejects zero, negative, fractional, overflowing and non-numeric values") {
  for (const char* bad : {"0", "-1", "-5", "1.5", "1e3", "", " ", "abc", "12a", "+3", "0x10"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_qty(bad).ok());
  }
  ParsedNumber big = parse_qty("9007199254740992");
  CHECK_FALSE(big.ok());
  CHECK(big.error == "'9007199254740992' is too large: a quantity is at most 9007199254740991");
  CHECK(parse_stock_value("9007199254740992").error ==
        "'9007199254740992' is too large: a stock value is at most 9007199254740991");
  CHECK(parse_count("99999999999999999999").error ==
        "'99999999999999999999' is too large: a count is at most 9007199254740991");
  CHECK_FALSE(parse_qty("99999999999999999999999999").ok());
  CHECK(parse_qty("0").error == "'0' is not a quantity (an integer from 1 to 9007199254740991)");
}

TEST_CASE("parse_stock_value knows unlimited and rejects other negatives") {
  CHECK(parse_stock_value("unlimited").value == kUnlimited);
  CHECK(parse_stock_value("-1").value == kUnlimited);
  CHECK(parse_stock_value("0").value == 0);
  CHECK(parse_stock_value("9007199254740991").value == kMaxStock);
  CHECK_FALSE(parse_stock_value("-2").ok());
  CHECK_FALSE(parse_stock_value("9007199254740992").ok());
  CHECK_FALSE(parse_stock_value("2.0").ok());
}

TEST_CASE("parse_stored_value accepts only canonical values") {
  CHECK(parse_stored_value("17") == 17);
  CHECK(parse_stored_value("0") == 0);
  CHECK(parse_stored_value("-1") == kUnlimited);
  for (const char* corrupt : {"abc", "", "-2", "007", "1.5", " 1", "9007199254740992", "-0"}) {
    CAPTURE(corrupt);
    CHECK_FALSE(parse_stored_value(corrupt).has_value());
  }
}

TEST_CASE("parse_bounded reads option values within their range") {
  CHECK(parse_bounded("15", 20).value == 15);
  CHECK_FALSE(parse_bounded("21", 20).ok());
  CHECK_FALSE(parse_bounded("-1", 20).ok());
}

TEST_CASE("a sign is not 'too large': the message says to write the value without it") {
  CHECK(parse_qty("+5").error ==
        "'+5' is not a quantity (an integer from 1 to 9007199254740991): write it without a sign");
  CHECK(parse_stock_value("+5").error ==
        "'+5' is not a stock value (0 to 9007199254740991, or -1 / unlimited): write it without a "
        "sign");
  CHECK(parse_qty("-5").error == "'-5' is not a quantity (an integer from 1 to 9007199254740991)");
}

TEST_CASE("a value quoted in a message is escaped and shortened") {
  CHECK(parse_qty("1\n2").error ==
        "'1\\n2' is not a quantity (an integer from 1 to 9007199254740991)");
  std::string long_text(300, 'x');
  CHECK(parse_qty(long_text).error.find("...' (300 bytes) is not a quantity") != std::string::npos);
}
