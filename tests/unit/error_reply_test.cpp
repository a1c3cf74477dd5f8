#include "core/error_reply.h"

#include <doctest/doctest.h>

using namespace stockctl;

TEST_CASE("an error reply is classified by its code") {
  CHECK(classify_error_reply("NOSCRIPT No matching script. Please use EVAL.") ==
        ErrorReply::noscript);
  CHECK(classify_error_reply("NOAUTH Authentication required.") == ErrorReply::noauth);
  CHECK(classify_error_reply("MOVED 3999 127.0.0.1:6381") == ErrorReply::moved);
  CHECK(classify_error_reply("ASK 3999 127.0.0.1:6381") == ErrorReply::ask);
  CHECK(classify_error_reply("TRYAGAIN Multiple keys request during rehashing of slot") ==
        ErrorReply::tryagain);
  CHECK(classify_error_reply("WRONGTYPE Operation against a key holding the wrong kind of value") ==
        ErrorReply::wrongtype);
  CHECK(classify_error_reply("OOM command not allowed when used memory > 'maxmemory'.") ==
        ErrorReply::writes_refused);
  CHECK(classify_error_reply("NOREPLICAS Not enough good replicas to write.") ==
        ErrorReply::writes_refused);
  CHECK(classify_error_reply("STOCKCTL_CONFLICT deduct 2 ok 8") == ErrorReply::stockctl_conflict);
  CHECK(classify_error_reply("STOCKCTL_CORRUPT abc") == ErrorReply::stockctl_corrupt);
  CHECK(classify_error_reply("STOCKCTL_OVERFLOW 9007199254740991") ==
        ErrorReply::stockctl_overflow);
  CHECK(classify_error_reply("STOCKCTL_INVALID keys per line") == ErrorReply::stockctl_invalid);
}

TEST_CASE("an ACL refusal is noperm, in a script too") {
  CHECK(classify_error_reply("NOPERM No permissions to access a key") == ErrorReply::noperm);
  CHECK(classify_error_reply("NOPERM User u has no permissions to run the 'fcall' command") ==
        ErrorReply::noperm);
  CHECK(classify_error_reply("ERR Error running script: No permissions to access a key") ==
        ErrorReply::noperm);
  CHECK_FALSE(not_executed(ErrorReply::noperm));
}

TEST_CASE("a code is matched as a whole word, never as a prefix") {
  CHECK(classify_error_reply("ASKING is not allowed here") == ErrorReply::other);
  CHECK(classify_error_reply("MOVEDX 1 a:1") == ErrorReply::other);
  CHECK(classify_error_reply("") == ErrorReply::other);
}

TEST_CASE("generic ERR replies are told apart by their text") {
  CHECK(classify_error_reply("ERR syntax error") == ErrorReply::syntax);
  CHECK(classify_error_reply("ERR This instance has cluster support disabled") ==
        ErrorReply::cluster_disabled);
  CHECK(classify_error_reply("ERR unknown command 'FOO'") == ErrorReply::unknown_command);
  CHECK(classify_error_reply("ERR wrong number of arguments for 'get' command") ==
        ErrorReply::other);
}

TEST_CASE("only replies that say the command did not run may be resent") {
  CHECK(not_executed(ErrorReply::tryagain));
  CHECK(not_executed(ErrorReply::clusterdown));
  CHECK(not_executed(ErrorReply::loading));
  CHECK(not_executed(ErrorReply::readonly));
  CHECK(not_executed(ErrorReply::masterdown));
  CHECK_FALSE(not_executed(ErrorReply::moved));
  CHECK_FALSE(not_executed(ErrorReply::noscript));
  CHECK_FALSE(not_executed(ErrorReply::other));
}

TEST_CASE("a corrupt value's reply that names its line gives the line and the value") {
  const std::optional<CorruptLine> second = corrupt_line("STOCKCTL_CORRUPT 2 abc");
  REQUIRE(second);
  CHECK(second->index == 1);
  CHECK(second->reply == "STOCKCTL_CORRUPT abc");
  const std::optional<CorruptLine> spaced = corrupt_line("STOCKCTL_CORRUPT 12 a b");
  REQUIRE(spaced);
  CHECK(spaced->index == 11);
  CHECK(spaced->reply == "STOCKCTL_CORRUPT a b");
  CHECK(corrupt_line("STOCKCTL_CORRUPT 1 ")->reply == "STOCKCTL_CORRUPT ");
  CHECK_FALSE(corrupt_line("STOCKCTL_CORRUPT abc"));
  CHECK_FALSE(corrupt_line("STOCKCTL_CORRUPT 0 abc"));
  CHECK_FALSE(corrupt_line("STOCKCTL_CORRUPT 01 abc"));
  CHECK_FALSE(corrupt_line("STOCKCTL_CORRUPT x1 abc"));
  CHECK_FALSE(corrupt_line("STOCKCTL_CONFLICT 1 abc"));
  CHECK_FALSE(corrupt_line("STOCKCTL_CORRUPT"));
}

TEST_CASE("the replies a script call or a library load meets are classified") {
  CHECK(classify_error_reply("NOPERM User u has no permissions to access the 'stockctl:x' key") ==
        ErrorReply::noperm);
  CHECK(classify_error_reply("ERR Function not found") == ErrorReply::no_function);
  CHECK(classify_error_reply("ERR unknown command 'FCALL', with args beginning with: ") ==
        ErrorReply::unknown_command);
  CHECK(classify_error_reply("ERR Library 'stockctl' already exists") ==
        ErrorReply::library_exists);
  CHECK(classify_error_reply("BUSYKEY Target key name already exists.") == ErrorReply::other);
}

TEST_CASE("refuses_command tells a refused command from a refused key") {
  CHECK(refuses_command("ERR unknown command 'FCALL', with args beginning with: ", "fcall"));
  CHECK(refuses_command("ERR unknown command `FCALL`, with args beginning with: ", "fcall"));
  CHECK(refuses_command("NOPERM this user has no permissions to run the 'fcall' command", "fcall"));
  CHECK_FALSE(
      refuses_command("NOPERM this user has no permissions to access one of the keys "
                      "used as arguments ('fcall' key)",
                      "fcall"));
  CHECK(refuses_command("NOPERM User u has no permissions to run the 'function|list' command",
                        "function"));
  CHECK_FALSE(refuses_command("NOPERM User u has no permissions to run the 'function|list' command",
                              "fcall"));
  CHECK_FALSE(refuses_command("ERR unknown command 'EVALSHA'", "fcall"));
  CHECK_FALSE(refuses_command("NOSCRIPT No matching script", "fcall"));
}

TEST_CASE("the place in a script Redis adds to an error is left out of messages") {
  CHECK(without_script_location("WRONGTYPE Operation against a key holding the wrong kind of "
                                "value script: stockctl_stock_66278830beae, on "
                                "@user_function:3515.") ==
        "WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(without_script_location("ERR boom script: 1a2b3c, on @user_script:12.") == "ERR boom");
  CHECK(without_script_location("ERR no script: here") == "ERR no script: here");
  CHECK(without_script_location("OOM command not allowed") == "OOM command not allowed");
}

TEST_CASE("a refusal names where it happened and, for an ACL, what the user lacks") {
  CHECK(with_noperm_hint("ERR boom\n", "stock:") == "ERR boom\\n");
  CHECK(
      with_noperm_hint("NOPERM this user has no permissions to run the 'scan' command", "shop:") ==
      "NOPERM this user has no permissions to run the 'scan' command; " + noperm_hint("shop:"));
  CHECK(error_on("stockctl:log:{7}", "NOPERM No permissions to access a key", "stock:") ==
        "refused on stockctl:log:{7}: NOPERM No permissions to access a key; " +
            noperm_hint("stock:"));
  CHECK(error_on("stock:{A}", "ERR boom", "stock:") == "stock:{A}: ERR boom");
}
