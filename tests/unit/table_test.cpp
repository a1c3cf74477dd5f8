#include "output/table.h"

#include <doctest/doctest.h>

using namespace stockctl;
using json = nlohmann::ordered_json;

namespace {

std::string render_all(const std::vector<json>& rows, std::size_t block_rows = 1000) {
  TableBlocks table(block_rows);
  std::string out;
  for (const json& row : rows) out += table.add(table_row(row));
  return out + table.flush();
}

}  // namespace

TEST_CASE("columns are as wide as their widest cell, numbers right-aligned, text left") {
  std::string out = render_all({
      {{"sku", "A"}, {"status", "ok"}, {"stock", 5}},
      {{"sku", "B-long"}, {"status", "missing"}, {"stock", 1234}},
  });
  CHECK(out ==
        "sku     status   stock\n"
        "A       ok           5\n"
        "B-long  missing   1234\n");
}

TEST_CASE("null and absent values show as '-' and keep a number column right-aligned") {
  std::string out = render_all({
      {{"sku", "A"}, {"stock", nullptr}},
      {{"sku", "B"}, {"stock", 10}, {"error", "boom"}},
      {{"sku", "C"}},
  });
  CHECK(out ==
        "sku  stock  error\n"
        "A        -  -\n"
        "B       10  boom\n"
        "C        -  -\n");
}

TEST_CASE("no line ends in a space, also when the last column is text shorter than its width") {
  std::string out = render_all({
      {{"a", 1}, {"note", ""}},
      {{"a", 22}, {"note", "longer"}},
  });
  CHECK(out ==
        " a  note\n"
        " 1\n"
        "22  longer\n");
}

TEST_CASE("a column with any text is left-aligned") {
  std::string out = render_all({{{"v", 7}}, {{"v", "x"}}});
  CHECK(out == "v\n7\nx\n");
}

TEST_CASE("a field that ends the rows having it ends the table") {
  std::string out = render_all({
      {{"sku", "A"}, {"stock", 1}, {"held", 0}},
      {{"sku", "B"}, {"stock", nullptr}, {"error", "bad"}},
  });
  CHECK(out ==
        "sku  stock  held  error\n"
        "A        1     0  -\n"
        "B        -     -  bad\n");
}

TEST_CASE("a field only some rows have keeps its place before the field after it") {
  std::string out = render_all({
      {{"sku", "A"}, {"status", "ok"}},
      {{"sku", "B"}, {"replayed", true}, {"status", "ok"}},
  });
  CHECK(out ==
        "sku  replayed  status\n"
        "A    -         ok\n"
        "B    true      ok\n");
}

TEST_CASE("nested objects become dotted columns, arrays compact JSON, control characters escaped") {
  TableRow row = table_row(json{{"latency_us", {{"p50", 3}, {"p99", 9}}},
                                {"lines", json::array({1, 2})},
                                {"error", "a\tb\nc"}});
  REQUIRE(row.size() == 4);
  CHECK(row[0].first == "latency_us.p50");
  CHECK(row[0].second.number);
  CHECK(row[1].first == "latency_us.p99");
  CHECK(row[2].first == "lines");
  CHECK(row[2].second.text == "[1,2]");
  CHECK_FALSE(row[2].second.number);
  CHECK(row[3].second.text == "a\\tb\\nc");
}

TEST_CASE("an array of objects (a hold's lines) is a row per element, the other fields repeated") {
  const json hold{{"op", "hold"},
                  {"id", "h1"},
                  {"lines", json::array({json{{"sku", "A"}, {"qty", 1}}, json{{"sku", "B"}}})},
                  {"status", "ok"}};
  const std::vector<TableRow> rows = table_rows(hold);
  REQUIRE(rows.size() == 2);
  std::vector<std::string> names;
  for (const auto& [name, cell] : rows[0]) names.push_back(name);
  CHECK(names == std::vector<std::string>{"op", "id", "lines.sku", "lines.qty", "status"});
  CHECK(rows[0][2].second.text == "A");
  CHECK(rows[1][1].second.text == "h1");
  CHECK(rows[1][2].second.text == "B");
  CHECK(rows[1].size() == 4);  // B has no qty: an absent cell, shown as '-'
  // No lines, or an array of numbers: one row, the array as its compact JSON.
  CHECK(table_rows(json{{"op", "hold"}, {"lines", json::array()}}).size() == 1);
  const std::vector<TableRow> numbers = table_rows(json{{"lines", json::array({1, 2})}});
  REQUIRE(numbers.size() == 1);
  CHECK(numbers[0][0].second.text == "[1,2]");
}

TEST_CASE("widths count characters, not bytes") {
  CHECK(display_width("caf\xC3\xA9") == 4);
  std::string out = render_all({{{"sku", "caf\xC3\xA9"}, {"n", 1}}, {{"sku", "abcd"}, {"n", 2}}});
  CHECK(out ==
        "sku   n\n"
        "caf\xC3\xA9  1\n"
        "abcd  2\n");
}

TEST_CASE("blocks: the header is printed again only when a block needs a wider layout") {
  TableBlocks table(2);
  std::string out;
  for (const char* sku : {"A", "B", "C", "D", "LONGER"}) {
    out += table.add(table_row(json{{"sku", sku}, {"stock", 1}}));
  }
  out += table.flush();
  CHECK(out ==
        "sku  stock\n"
        "A        1\n"
        "B        1\n"
        "C        1\n"
        "D        1\n"
        "\n"
        "sku     stock\n"
        "LONGER      1\n");
  CHECK(table.flush().empty());
}

TEST_CASE("a full block is returned as soon as it fills, so that memory holds one block") {
  TableBlocks table(2);
  CHECK(table.add(table_row(json{{"n", 1}})).empty());
  CHECK(table.add(table_row(json{{"n", 2}})) == "n\n1\n2\n");
  CHECK(table.flush().empty());
}

TEST_CASE("a summary is one line per field, numbers right-aligned to the widest number") {
  std::string out = render_fields(table_row(json{{"op", "init"},
                                                 {"source", "/var/lib/stock/exports/today.csv"},
                                                 {"rows", 12},
                                                 {"counts", {{"ok", 3}}},
                                                 {"dry_run", false},
                                                 {"x", nullptr}}));
  CHECK(out ==
        "op         init\n"
        "source     /var/lib/stock/exports/today.csv\n"
        "rows       12\n"
        "counts.ok   3\n"
        "dry_run    false\n"
        "x          -\n");
}
