#include "core/cart_spread.h"

namespace stockctl {

std::vector<SpreadLine> spread_cart(std::size_t n, std::size_t triples, int groups) {
  const std::size_t first = n % triples;
  const std::size_t turn = (n / triples) % 3;  // which member the one-item groups take
  auto next = [&](std::size_t k) { return (first + k) % triples; };
  switch (groups) {
    case 1:
      return {{first, 0}, {first, 1}, {first, 2}};
    case 2:
      return {{first, turn}, {first, (turn + 1) % 3}, {next(1), turn}};
    default:
      return {{first, turn}, {next(1), turn}, {next(2), turn}};
  }
}

}  // namespace stockctl
