#include "core/cart_spread.h"

#include <doctest/doctest.h>

#include <set>

using stockctl::spread_cart;
using stockctl::SpreadLine;

namespace {

std::set<std::size_t> triples_of(const std::vector<SpreadLine>& lines) {
  std::set<std::size_t> triples;
  for (const SpreadLine& line : lines) triples.insert(line.triple);
  return triples;
}

std::set<std::pair<std::size_t, std::size_t>> items_of(const std::vector<SpreadLine>& lines) {
  std::set<std::pair<std::size_t, std::size_t>> items;
  for (const SpreadLine& line : lines) items.insert({line.triple, line.member});
  return items;
}

}  // namespace

TEST_CASE("spread_cart: every cart spans exactly the slot groups asked, over 3 distinct items") {
  for (int groups = 1; groups <= 3; ++groups) {
    for (std::size_t n = 0; n < 60; ++n) {
      const std::vector<SpreadLine> lines = spread_cart(n, 7, groups);
      CHECK(lines.size() == 3);
      CHECK(triples_of(lines).size() == static_cast<std::size_t>(groups));
      CHECK(items_of(lines).size() == 3);
      for (const SpreadLine& line : lines) CHECK((line.triple < 7 && line.member < 3));
    }
  }
}

TEST_CASE("spread_cart: the carts reach every item") {
  for (int groups = 1; groups <= 3; ++groups) {
    std::set<std::pair<std::size_t, std::size_t>> seen;
    for (std::size_t n = 0; n < 5 * 3; ++n) {
      for (auto item : items_of(spread_cart(n, 5, groups))) seen.insert(item);
    }
    CHECK(seen.size() == 15);
  }
}

TEST_CASE("spread_cart: three triples are enough for three groups") {
  CHECK(triples_of(spread_cart(2, 3, 3)) == std::set<std::size_t>{0, 1, 2});
}
