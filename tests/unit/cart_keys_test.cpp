#include "core/cart_keys.h"

#include <doctest/doctest.h>

#include "core/hash_slot.h"

using namespace stockctl;

TEST_CASE("a cart's record is in its id's slot, under the scheme's prefix") {
  const KeyScheme scheme;
  CHECK(cart_record_key(scheme, "o-1") == "stockctl:cart:stock:{o-1}");
  CHECK(key_slot(cart_record_key(scheme, "o-1")) == key_slot("{o-1}"));
  KeyScheme flat;
  flat.hashtag = false;
  CHECK(cart_record_key(flat, "o-1") == "stockctl:cart:stock:o-1");
}

TEST_CASE("a slot's due index, group records and group index are in that slot") {
  const KeyScheme scheme;
  for (int slot : {0, 12, 9000, kClusterSlots - 1}) {
    CHECK(key_slot(due_key(scheme, slot)) == slot);
    CHECK(key_slot(group_record_key(scheme, slot, "o-1#12#1")) == slot);
    CHECK(key_slot(group_index_key(scheme, slot)) == slot);
  }
  CHECK(group_record_key(scheme, 12, "o#12#1").find(":o#12#1") != std::string::npos);
}

TEST_CASE("the due pattern matches every slot's due index and escapes the prefix") {
  KeyScheme scheme;
  scheme.prefix = "a*b:";
  CHECK(due_index_pattern(scheme) == "stockctl:carts-due:a\\*b:{*}");
  CHECK(due_key(scheme, 5).rfind("stockctl:carts-due:a*b:{", 0) == 0);
}

TEST_CASE("groups_of groups stock keys by their slot") {
  const std::vector<SlotGroup> groups = groups_of({"stock:{a}", "stock:{b}", "x{a}"});
  REQUIRE(groups.size() == 2);
  for (const SlotGroup& g : groups) {
    if (g.lines.size() == 2) CHECK(g.lines == std::vector<std::size_t>{0, 2});
  }
  CHECK(cart_slot("stock:{a}") == key_slot("a"));
}

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
