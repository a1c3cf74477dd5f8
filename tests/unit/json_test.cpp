#include "sources/json.h"

#include <doctest/doctest.h>

#include "source_helpers.h"

using namespace stockctl;
using stockctl::test::read_string;

TEST_CASE("json: an array of objects, each row on the line its object starts") {
  auto r = read_string(
      "[\n  {\"sku\": \"42\", \"stock\": 100},\n  {\"sku\": 43,\n   \"stock\": \"7\"}\n]",
      Format::json);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0].line == 2);
  CHECK(r.records[0].fields[0].text == "42");
  CHECK(r.records[0].fields[1].text == "100");
  CHECK(r.records[1].line == 3);
  CHECK(r.records[1].fields[0].text == "43");
  CHECK(r.records[1].fields[1].text == "7");
}

TEST_CASE("json: an object mapping SKU to stock") {
  auto r =
      read_string("{\"42\": 100,\n \"43\": -1, \"44\": 1.5, \"45\": \"unlimited\"}", Format::json);
  REQUIRE(r.records.size() == 4);
  CHECK(r.records[0].keyed);
  CHECK(r.records[0].sku_key == "42");
  CHECK(r.records[0].fields[1].text == "100");
  CHECK(r.records[1].line == 2);
  CHECK(r.records[1].fields[1].text == "-1");
  CHECK(r.records[2].sku_key == "44");  // a fraction is a row, for the number check to refuse
  CHECK(r.records[2].fields[1].text == "1.5");
  CHECK(r.records[3].fields[1].text == "unlimited");
}

TEST_CASE("json: one object of columns is not read as a map of SKUs") {
  auto r = read_string("{\"sku\":\"x\",\"stock\":5}", Format::json);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].fatal);
  CHECK(r.records[0].error ==
        "'sku' looks like a column name, not a SKU: expected an array of objects ([{\"sku\": "
        "\"A1\", \"stock\": 5}, ...]) or an object mapping SKU to stock ({\"A1\": 5, ...})");
}

TEST_CASE("json: a map key named like a renamed column is refused, in the caller's names") {
  auto r = read_string("{\"A\": 1,\n\"Left\": 5}", Format::json, {"item", "left"});
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[1].fatal);
  CHECK(r.records[1].line == 2);
  CHECK(r.records[1].error.rfind("'Left' looks like a column name, not a SKU: expected an array "
                                 "of objects ([{\"item\": \"A1\", \"left\": 5}, ...]) or an "
                                 "object mapping SKU to left",
                                 0) == 0);
}

TEST_CASE("json: a map value that is not a number makes the source invalid") {
  for (const char* text : {"{\"A\": \"x\"}", "{\"A\": null}", "{\"A\": true}",
                           "{\"A\": {\"total\": 10, \"issued\": 3}}", "{\"A\": [5]}"}) {
    CAPTURE(text);
    auto r = read_string(text, Format::json);
    REQUIRE(r.records.size() == 1);
    CHECK(r.records[0].fatal);
    CHECK(r.records[0].error.rfind("the value of 'A' is ", 0) == 0);
    CHECK(r.records[0].error.find("not a number: expected an array of objects") !=
          std::string::npos);
  }
}

TEST_CASE("json: a single value is neither shape") {
  auto r = read_string("5", Format::json);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].fatal);
  CHECK(r.records[0].error.rfind("the source is a single value: expected an array", 0) == 0);
}

TEST_CASE("json: fractions keep their spelling so the number check can name them") {
  auto r = read_string("[{\"sku\": \"a\", \"stock\": 1.5}]", Format::json);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].fields[1].text == "1.5");
}

TEST_CASE("json: a non-object element is an invalid row, not the end of the source") {
  auto r = read_string("[1, {\"sku\": \"b\", \"stock\": 2}]", Format::json);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0].error == "an array element is not an object");
  CHECK(r.records[1].error.empty());
}

TEST_CASE("json: a syntax error is fatal and gives its line") {
  auto r = read_string("[\n{\"sku\": \"a\", \"stock\": 1},\n{\"sku\": }\n]", Format::json);
  REQUIRE_FALSE(r.records.empty());
  CHECK(r.records.back().fatal);
  CHECK(r.records.back().line == 3);
  CHECK(r.records.back().error.rfind("invalid JSON", 0) == 0);
}

TEST_CASE("json: deep nesting is refused, not recursed into") {
  std::string deep =
      "[{\"sku\": \"a\", \"stock\": " + std::string(100, '[') + std::string(100, ']') + "}]";
  auto r = read_string(deep, Format::json);
  REQUIRE_FALSE(r.records.empty());
  CHECK(r.records.back().fatal);
  CHECK(r.records.back().error == "JSON nested too deeply");
}

TEST_CASE("ndjson: one object per line, blank lines skipped, bad lines named") {
  auto r =
      read_string("{\"sku\":\"a\",\"stock\":1}\n\n{oops\n[1]\n{\"sku\":\"b\"}\n", Format::ndjson);
  REQUIRE(r.records.size() == 4);
  CHECK(r.records[0].line == 1);
  CHECK(r.records[1].line == 3);
  CHECK(r.records[1].error == "invalid JSON on this line");
  CHECK(r.records[2].error == "the line is not a JSON object");
  CHECK(r.records[3].line == 5);
  CHECK_FALSE(r.records[3].fields[1].present);
}
