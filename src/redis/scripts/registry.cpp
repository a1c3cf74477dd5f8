#include "redis/scripts/registry.h"

#include "lua_scripts.h"

namespace stockctl {

const Script& stock_script() { return lua::stock; }
const Script& put_script() { return lua::put; }
const Script& unlock_script() { return lua::unlock; }
const Script& extend_script() { return lua::extend; }

std::vector<const Script*> all_scripts() {
  return {&lua::stock, &lua::put, &lua::unlock, &lua::extend};
}

const Library& script_library() { return lua::library; }

}  // namespace stockctl
