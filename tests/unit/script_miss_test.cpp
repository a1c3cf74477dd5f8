#include <doctest/doctest.h>

#include "redis/call.h"
#include "redis/scripts/registry.h"

using namespace stockctl;

namespace {
CallResult error_reply(const std::string& text) {
  CallResult r;
  r.state = CallResult::State::replied;
  r.reply.type = Reply::Type::error;
  r.reply.str = text;
  return r;
}

const Call script_call{&stock_script(), {"stock:{a}", "deduct", "1"}};
}  // namespace

TEST_CASE("a script call that did not run for want of its script or library is told apart") {
  CHECK(script_miss(script_call, error_reply("NOSCRIPT No matching script.")) ==
        ScriptMiss::script);
  CHECK(script_miss(script_call, error_reply("ERR Function not found")) == ScriptMiss::library);
}

TEST_CASE("a server that refuses FCALL is one to call with EVALSHA") {
  // Redis 7 style quotes, then Redis 6's backquotes, then an ACL that forbids the command.
  CHECK(script_miss(script_call,
                    error_reply("ERR unknown command 'FCALL', with args beginning with: ")) ==
        ScriptMiss::no_functions);
  CHECK(script_miss(script_call,
                    error_reply("ERR unknown command `FCALL`, with args beginning with: `x`, ")) ==
        ScriptMiss::no_functions);
  CHECK(
      script_miss(script_call,
                  error_reply("NOPERM this user has no permissions to run the 'fcall' command")) ==
      ScriptMiss::no_functions);
}

TEST_CASE("other errors, and plain commands, are not script misses") {
  CHECK(script_miss(script_call, error_reply("STOCKCTL_CORRUPT abc")) == ScriptMiss::none);
  CHECK(script_miss(script_call, error_reply("NOPERM this user has no permissions to access one "
                                             "of the keys used as arguments")) == ScriptMiss::none);
  CHECK(script_miss(script_call, error_reply("ERR unknown command 'FOO'")) == ScriptMiss::none);
  const Call plain{nullptr, {"GET", "x"}};
  CHECK(script_miss(plain, error_reply("NOSCRIPT No matching script.")) == ScriptMiss::none);
  CallResult lost;
  lost.state = CallResult::State::unknown;
  CHECK(script_miss(script_call, lost) == ScriptMiss::none);
}

TEST_CASE("the library carries every script as a function named with its version") {
  const Library& library = script_library();
  CHECK(library.name.substr(0, 9) == "stockctl_");
  const std::string tag(library.name.substr(9));
  CHECK(tag.size() == 12);
  CHECK(library.code.substr(0, 20 + tag.size()) == "#!lua name=stockctl_" + tag);
  for (const Script* s : all_scripts()) {
    CHECK(s->function == "stockctl_" + std::string(s->name) + "_" + tag);
    CHECK(library.code.find("'" + std::string(s->function) + "'") != std::string_view::npos);
  }
}

TEST_CASE("a library that is already there, loaded by another process, is loaded") {
  Reply ok;
  ok.type = Reply::Type::string;
  ok.str = std::string(script_library().name);
  CHECK(library_loaded(ok));
  CHECK(library_loaded(error_reply("ERR Library 'stockctl_x' already exists").reply));
  CHECK_FALSE(library_loaded(error_reply("NOPERM this user has no permissions to run the "
                                         "'function|load' command")
                                 .reply));
}
