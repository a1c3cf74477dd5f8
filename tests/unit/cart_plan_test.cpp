#include "core/cart_plan.h"

#include <doctest/doctest.h>

using namespace stockctl;

TEST_CASE("group_by_slot orders groups by slot and keeps the lines' order inside each") {
  const std::vector<SlotGroup> groups = group_by_slot({9000, 12, 9000, 300});
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].slot == 12);
  CHECK(groups[0].lines == std::vector<std::size_t>{1});
  CHECK(groups[1].slot == 300);
  CHECK(groups[2].slot == 9000);
  CHECK(groups[2].lines == std::vector<std::size_t>{0, 2});
  CHECK(group_by_slot({}).empty());
}

TEST_CASE("group_hold_id keeps ids with '#' apart") {
  CHECK(group_hold_id("cart-7", 12, 1) == "cart-7#12#1");
  CHECK(group_hold_id("a#3#4", 10, 1) != group_hold_id("a#3", 4, 10));
  CHECK(group_hold_id("a", 1, 2) != group_hold_id("a#1", 2, 1));
}

TEST_CASE("cart_canon is the same for the same lines in any order and tells kinds apart") {
  const std::string a = cart_canon("order", {"stock:{A}", "stock:{B}"}, {2, 1});
  CHECK(a == "order\nstock:{A}\t2\nstock:{B}\t1");
  CHECK(cart_canon("order", {"stock:{B}", "stock:{A}"}, {1, 2}) == a);
  CHECK(cart_canon("hold", {"stock:{A}", "stock:{B}"}, {2, 1}) != a);
  CHECK(cart_canon("order", {"stock:{A}", "stock:{B}"}, {2, 2}) != a);
}
