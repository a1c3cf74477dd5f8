#include "redis/scripts/registry.h"

#include "lua_scripts.h"

namespace stockctl {

const Script& stock_script() { return lua::stock; }
const Script& put_script() { return lua::put; }
const Script& load_script() { return lua::load; }
const Script& unlock_script() { return lua::unlock; }
const Script& remove_script() { return lua::remove; }
const Script& extend_script() { return lua::extend; }
const Script& hold_script() { return lua::hold; }
const Script& settle_script() { return lua::settle; }
const Script& reap_script() { return lua::reap; }
const Script& held_view_script() { return lua::held_view; }
const Script& cart_script() { return lua::cart; }
const Script& carts_due_script() { return lua::carts_due; }
const Script& tombstone_script() { return lua::tombstone; }
const Script& split_item_script() { return lua::split_item; }
const Script& split_bucket_script() { return lua::split_bucket; }

std::vector<const Script*> all_scripts() {
  return {&lua::stock,     &lua::put,  &lua::unlock,     &lua::extend,       &lua::hold,
          &lua::settle,    &lua::reap, &lua::held_view,  &lua::cart,         &lua::carts_due,
          &lua::tombstone, &lua::load, &lua::split_item, &lua::split_bucket, &lua::remove};
}

const Library& script_library() { return lua::library; }

}  // namespace stockctl
