#pragma once

#include <cstddef>
#include <vector>

namespace stockctl {

/// Where one line of a bench cart comes from: item `member` (0, 1 or 2) of the slot triple
/// `triple` (three test items that share one hash slot).
struct SpreadLine {
  std::size_t triple = 0;
  std::size_t member = 0;
};

/// The 3 lines of bench cart number `n` over `triples` slot triples (at least 3), spanning
/// exactly `groups` slot groups (1, 2 or 3): one group takes a whole triple; two take two items
/// of one triple and one of the next; three take one item of three consecutive triples. The
/// carts walk through every triple and member, so the load spreads over all the items.
std::vector<SpreadLine> spread_cart(std::size_t n, std::size_t triples, int groups);

}  // namespace stockctl
