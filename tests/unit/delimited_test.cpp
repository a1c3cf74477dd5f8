#include "sources/delimited.h"

#include <doctest/doctest.h>

#include "source_helpers.h"

using namespace stockctl;
using stockctl::test::read_string;

TEST_CASE("csv: plain rows carry their physical line numbers") {
  auto r = read_string("sku,stock\n42,100\n\n43,7\n", Format::csv);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0].line == 2);
  CHECK(r.records[0].fields[0].text == "42");
  CHECK(r.records[0].fields[1].text == "100");
  CHECK(r.records[1].line == 4);  // the blank line 3 is skipped but counted
}

TEST_CASE("csv: RFC 4180 quoting, doubled quotes and line breaks inside quotes") {
  auto r = read_string("sku,stock\n\"a,\"\"b\"\"\",1\n\"multi\nline\",2\n3,3\n", Format::csv);
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[0].fields[0].text == "a,\"b\"");
  CHECK(r.records[1].fields[0].text == "multi\nline");
  CHECK(r.records[1].line == 3);
  CHECK(r.records[2].line == 5);
}

TEST_CASE("csv: CRLF line ends, a BOM, and columns found by name in any order and case") {
  auto r = read_string(
      "\xEF\xBB\xBF"
      "Stock,extra,SKU\r\n5,x,42\r\n",
      Format::csv);
  REQUIRE(r.records.size() == 1);
  CHECK(r.header == std::vector<bool>{true, true});
  CHECK(r.records[0].fields[0].text == "42");
  CHECK(r.records[0].fields[1].text == "5");
}

TEST_CASE("csv: an unterminated quote is fatal and names the line it opened on") {
  auto r = read_string("sku,stock\n1,2\n\"open,3\nmore\n", Format::csv);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[1].fatal);
  CHECK(r.records[1].error == "unterminated quoted field (opened on line 3)");
}

TEST_CASE("csv: a stray quote makes the row invalid") {
  auto r = read_string("sku,stock\na\"b,1\n", Format::csv);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].error == "stray '\"' or text after a closing quote in field 1");
}

TEST_CASE("csv: a short row leaves the missing column absent") {
  auto r = read_string("sku,stock\n42\n", Format::csv);
  REQUIRE(r.records.size() == 1);
  CHECK_FALSE(r.records[0].fields[1].present);
}

TEST_CASE("csv: an empty source is fatal") {
  auto r = read_string("", Format::csv);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].fatal);
}

TEST_CASE("tsv: mysql --batch NULL, \\N and backslash escapes") {
  auto r = read_string("sku\tstock\na\\tb\tNULL\nc\\\\d\t\\N\nline\\nbreak\t5\n", Format::tsv);
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[0].fields[0].text == "a\tb");
  CHECK(r.records[0].fields[1].null);
  CHECK(r.records[1].fields[0].text == "c\\d");
  CHECK(r.records[1].fields[1].null);
  CHECK(r.records[2].fields[0].text == "line\nbreak");
  CHECK(r.records[2].fields[1].text == "5");
  CHECK(r.records[2].line == 4);
}

TEST_CASE("tsv: \\0 becomes a NUL byte") {
  auto r = read_string("sku\tstock\na\\0b\t1\n", Format::tsv);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].fields[0].text == std::string("a\0b", 3));
}
