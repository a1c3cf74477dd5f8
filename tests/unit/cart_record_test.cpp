#include "holds/cart_record.h"

#include <doctest/doctest.h>

#include "core/hash_slot.h"

namespace stockctl {

TEST_CASE("slot_tag puts a key in every slot with a short tag") {
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    const std::string& tag = slot_tag(slot);
    REQUIRE(key_slot("stockctl:carts-due:stock:{" + tag + "}") == slot);
    CHECK(tag.size() <= 6);
  }
}

TEST_CASE("slot_tag rejects a slot outside the cluster's") {
  CHECK_THROWS(slot_tag(kClusterSlots));
  CHECK_THROWS(slot_tag(-1));
}

}  // namespace stockctl
