#include "core/hold_lines.h"

#include <doctest/doctest.h>

using namespace stockctl;

namespace {

std::string problem_of(const std::string& text) {
  HoldLine line;
  return parse_hold_line(text, line);
}

}  // namespace

TEST_CASE("parse_hold_line reads SKU=QTY, the SKU ending at the first '='") {
  HoldLine line;
  CHECK(parse_hold_line("A=2", line).empty());
  CHECK(line.sku == "A");
  CHECK(line.qty == 2);
  CHECK(parse_hold_line("sku:42=9007199254740991", line).empty());
  CHECK(line.sku == "sku:42");
  CHECK(line.qty == 9007199254740991);
}

TEST_CASE("parse_hold_line refuses each malformed line with its own reason") {
  CHECK(problem_of("A=") == "the QTY after '=' is missing");
  CHECK(problem_of("=3") == "the SKU before '=' is missing");
  CHECK(problem_of("A") == "a line is SKU=QTY");
  CHECK(problem_of("A=0").rfind("QTY '0' is not a quantity", 0) == 0);
  CHECK(problem_of("A=-1").rfind("QTY '-1' is not a quantity", 0) == 0);
  CHECK(problem_of("A==2").rfind("QTY '=2' is not a quantity", 0) == 0);
  CHECK(problem_of("A=1.5").rfind("QTY '1.5'", 0) == 0);
  CHECK(problem_of("A=9007199254740992").rfind("QTY", 0) == 0);
}

TEST_CASE("merge_hold_lines adds up lines of the same item and orders them by SKU") {
  std::vector<HoldLine> lines{{"b", 1}, {"a", 2}, {"b", 3}, {"c", 1}, {"a", 1}};
  CHECK(merge_hold_lines(lines).empty());
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].sku == "a");
  CHECK(lines[0].qty == 3);
  CHECK(lines[1].sku == "b");
  CHECK(lines[1].qty == 4);
  CHECK(lines[2].sku == "c");
  CHECK(lines[2].qty == 1);
}

TEST_CASE("merge_hold_lines refuses a sum past 2^53-1") {
  std::vector<HoldLine> lines{{"a", 9007199254740991}, {"a", 1}};
  CHECK(merge_hold_lines(lines) == "item 'a': the lines add up to more than 9007199254740991");
}

TEST_CASE("validate_hold_id refuses empty, long and control-character ids") {
  CHECK(validate_hold_id("cart-7").empty());
  CHECK(validate_hold_id("") == "an id cannot be empty");
  CHECK(validate_hold_id(std::string(257, 'x')) == "id is 257 bytes long; at most 256");
  CHECK(validate_hold_id("a\nb") == "id contains a control character");
}

TEST_CASE("hold records live outside the items' keys, in the slot of their id") {
  CHECK(hold_record_key(KeyScheme{}, "cart-7") == "stockctl:hold:stock:{cart-7}");
  CHECK(hold_record_key(KeyScheme{"redis_key:stock:", false}, "c") ==
        "stockctl:hold:redis_key:stock:c");
  CHECK_FALSE(sku_of_key(KeyScheme{}, hold_record_key(KeyScheme{}, "cart-7")));
  CHECK_FALSE(sku_of_key(KeyScheme{}, "stock:{a}:holds"));
  CHECK_FALSE(sku_of_key(KeyScheme{"redis_key:stock:", false}, "redis_key:stock:a{t}b:held"));
}
