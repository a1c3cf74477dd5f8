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

TEST_CASE("csv: a record with fewer fields than the header is invalid") {
  auto r = read_string("sku,stock\n42\n", Format::csv);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].error == "1 field but the header has 2");
  CHECK_FALSE(r.records[0].fatal);
}

TEST_CASE("csv: a record with more fields than the header is invalid, not cut short") {
  auto r = read_string("sku,stock\nA,1,000\nB,2\n", Format::csv);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0].error == "3 fields but the header has 2 (quote a value that holds a comma)");
  CHECK(r.records[0].fields[0].text == "A");  // the SKU can still be named
  CHECK_FALSE(r.records[0].fatal);
  CHECK(r.records[1].error.empty());
}

TEST_CASE("csv: a header naming a column twice makes the source invalid") {
  auto r = read_string("sku,stock,Stock \nA,1,2\n", Format::csv);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].fatal);
  CHECK(r.records[0].line == 1);
  CHECK(r.records[0].error == "the header names column 'stock' twice (columns 2 and 3)");
}

TEST_CASE("csv: a header naming an unwanted column twice is refused too") {
  auto r = read_string("\nsku,note,stock,note\nA,x,1,y\n", Format::csv);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].fatal);
  CHECK(r.records[0].line == 2);  // where the header is
}

TEST_CASE("csv: psql \\copy csv output, free text spanning lines, keeps line numbers physical") {
  // What `\copy (select sku, note, stock from item) to stdout csv header` prints.
  auto r = read_string(
      "sku,note,stock\nA,\"two\nlines\",5\nB,plain,6\nC,\"has \"\"quotes\"\", "
      "commas\r\nand crlf\",7\nD,,8\nE,\"\",x\n",
      Format::csv);
  REQUIRE(r.records.size() == 5);
  CHECK(r.records[0].line == 2);
  CHECK(r.records[0].fields[1].text == "5");
  CHECK(r.records[1].line == 4);
  CHECK(r.records[2].line == 5);
  CHECK(r.records[2].fields[1].text == "7");
  CHECK(r.records[3].line == 7);
  CHECK(r.records[4].line == 8);
  for (const Record& rec : r.records) CHECK(rec.error.empty());
}

TEST_CASE("csv: in a CRLF file a line break inside quotes keeps its CR, the record end does not") {
  auto r =
      read_string("note,stock,sku\r\n\"a\r\nb\",5,X\r\nc,6,Y\r\n", Format::csv, {"note", "sku"});
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0].fields[0].text == "a\r\nb");
  CHECK(r.records[0].fields[1].text == "X");
  CHECK(r.records[1].line == 4);
  CHECK(r.records[1].fields[1].text == "Y");
}

TEST_CASE("csv: an unterminated quote in the header is fatal") {
  auto r = read_string("sku,\"stock\nA,1\n", Format::csv);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].fatal);
  CHECK(r.records[0].error == "header row: unterminated quoted field (opened on line 1)");
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

TEST_CASE("tsv: a row with more or fewer fields than the header is invalid") {
  auto r = read_string("sku\tstock\nA\t1\t000\nB\nC\t3\n", Format::tsv);
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[0].error == "3 fields but the header has 2 (escape a tab in a value as \\t)");
  CHECK(r.records[1].error == "1 field but the header has 2");
  CHECK(r.records[2].error.empty());
}

TEST_CASE("tsv: a header naming a column twice makes the source invalid") {
  auto r = read_string("sku\tSKU\tstock\nA\tB\t1\n", Format::tsv);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].fatal);
  CHECK(r.records[0].error == "the header names column 'sku' twice (columns 1 and 2)");
}

// The reader takes its input in blocks of 64 KiB: rows, CRLF pairs and quoted fields that
// straddle a block's end, and a row longer than a block, read as any other.
TEST_CASE("csv: rows across the reader's block boundaries and longer than a block") {
  constexpr std::size_t kBlock = 65536;
  std::string text = "sku,stock\r\n";
  std::size_t line = 1;
  std::vector<std::string> skus;
  std::vector<std::size_t> lines;
  auto add = [&](const std::string& sku, const std::string& written, std::size_t breaks) {
    skus.push_back(sku);
    lines.push_back(++line);
    text += written + ",1\r\n";
    line += breaks;
  };
  // Padding puts the '\r' of a CRLF pair as the first block's last byte.
  std::string pad(kBlock - text.size() - std::string(",1\r").size(), 'p');
  add(pad, pad, 0);
  REQUIRE(text[kBlock - 1] == '\r');
  for (int i = 0; text.size() < 3 * kBlock; ++i) {
    std::string sku = "item-" + std::to_string(i);
    if (i % 7 == 0) {
      add(sku + "\nx", "\"" + sku + "\nx\"", 1);  // a quoted field with a line break
    } else {
      add(sku, sku, 0);
    }
  }
  std::string long_sku(200000, 'a');
  skus.push_back(long_sku);
  lines.push_back(++line);
  text += long_sku + ",1";  // the last row has no line end
  auto r = read_string(text, Format::csv);
  REQUIRE(r.records.size() == skus.size());
  for (std::size_t i = 0; i < skus.size(); ++i) {
    CHECK(r.records[i].error.empty());
    CHECK(r.records[i].fields[0].text == skus[i]);
    CHECK(r.records[i].fields[1].text == "1");
    CHECK(r.records[i].line == lines[i]);
  }
}

TEST_CASE("tsv: a row longer than the reader's block") {
  std::string long_sku(100000, 'b');
  auto r = read_string("sku\tstock\n" + long_sku + "\t5\nc\t6\n", Format::tsv);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0].fields[0].text == long_sku);
  CHECK(r.records[1].fields[1].text == "6");
  CHECK(r.records[1].line == 3);
}

namespace {

// The fatal message a CSV reader gives for `text` when the caller's header check refuses a
// header without the SKU column.
std::string header_problem(const std::string& text, char delimiter) {
  std::istringstream in(text);
  std::string problem;
  RecordHandler handler{[](const std::vector<bool>& present) {
                          return present[0] ? std::string()
                                            : std::string("header has no 'sku' column");
                        },
                        [&](Record& r) {
                          if (r.fatal) problem = r.error;
                          return true;
                        }};
  read_csv(in, {"sku", "stock"}, handler, delimiter);
  return problem;
}

}  // namespace

TEST_CASE("csv: --delimiter splits fields at another character, quotes included") {
  std::istringstream in("sku;stock\n\"a;b\";1\nc;2\n");
  std::vector<Record> records;
  RecordHandler handler{nullptr, [&](Record& r) {
                          records.push_back(r);
                          return true;
                        }};
  read_csv(in, {"sku", "stock"}, handler, ';');
  REQUIRE(records.size() == 2);
  CHECK(records[0].fields[0].text == "a;b");
  CHECK(records[0].fields[1].text == "1");
  CHECK(records[1].fields[0].text == "c");
  CHECK(records[1].error.empty());
}

TEST_CASE("csv: a header without the SKU column says how it was split, and hints a delimiter") {
  CHECK(header_problem("sku;stock\nA;1\n", ',') ==
        "header has no 'sku' column (fields split at ',': 1 field, 'sku;stock'); try "
        "--delimiter ';'");
  CHECK(header_problem("item,stock\nA,1\n", ',') ==
        "header has no 'sku' column (fields split at ',': 2 fields, 'item,stock')");
  CHECK(header_problem("sku,stock\nA,1\n", ';') ==
        "header has no 'sku' column (fields split at ';': 1 field, 'sku,stock'); try "
        "--delimiter ','");
  CHECK(header_problem("sku\tstock\n", ',').find("use --format tsv") != std::string::npos);
}
