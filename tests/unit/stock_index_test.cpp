#include "core/stock_index.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace stockctl;

namespace {

using Kind = StockIndex::Found::Kind;

struct Row {
  std::string sku;
  std::int64_t value;
  std::size_t line;
};

// Builds an index the way --init-from does: one pass, then a second one if seal() asks.
StockIndex index_of(const std::vector<Row>& rows) {
  StockIndex index;
  for (const Row& r : rows) index.add(r.sku, r.value);
  if (index.seal()) {
    for (const Row& r : rows) index.add_exact(r.sku, r.value, r.line);
  }
  return index;
}

}  // namespace

TEST_CASE("stock index: finds each SKU's value, and says when a SKU has no row") {
  StockIndex index = index_of({{"a", 5, 2}, {"b", -1, 3}, {"c", 0, 4}});
  CHECK(index.find("a").kind == Kind::value);
  CHECK(index.find("a").value == 5);
  CHECK(index.find("b").value == -1);
  CHECK(index.find("c").value == 0);
  CHECK(index.find("d").kind == Kind::none);
}

TEST_CASE("stock index: an invalid row is found as invalid, not as missing") {
  StockIndex index = index_of({{"a", StockIndex::kInvalid, 2}, {"b", 1, 3}});
  CHECK(index.find("a").kind == Kind::invalid);
  CHECK(index.find("b").kind == Kind::value);
}

TEST_CASE("stock index: a SKU given twice is a duplicate, naming both lines") {
  StockIndex index = index_of({{"a", 1, 2}, {"b", 2, 3}, {"a", 3, 4}});
  StockIndex::Found found = index.find("a");
  CHECK(found.kind == Kind::duplicate);
  CHECK(found.first_line == 2);
  CHECK(found.line == 4);
  CHECK(index.find("b").value == 2);
}

TEST_CASE("stock index: no second pass when every hash is distinct") {
  StockIndex index;
  for (int i = 0; i < 1000; ++i) index.add("item-" + std::to_string(i), i);
  CHECK_FALSE(index.seal());
  CHECK(index.find("item-999").value == 999);
  CHECK(index.find("item-1000").kind == Kind::none);
}

TEST_CASE("sku hash is FNV-1a, stable across runs") {
  CHECK(sku_hash("") == 14695981039346656037ULL);
  CHECK(sku_hash("a") == 0xaf63dc4c8601ec8cULL);
}
