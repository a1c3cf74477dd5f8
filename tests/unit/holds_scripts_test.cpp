// The typed calls of the holds scripts (redis/scripts/hold, settle, cart, reap): the argv each
// builder sends, in each script's KEYS and ARGV order (the headers of lua/*.lua), and the replies
// each parser accepts or refuses.

#include <doctest/doctest.h>

#include "core/sku.h"
#include "fake_node.h"
#include "redis/call.h"
#include "redis/scripts/cart.h"
#include "redis/scripts/hold.h"
#include "redis/scripts/reap.h"
#include "redis/scripts/registry.h"
#include "redis/scripts/settle.h"

using namespace stockctl;
using stockctl::test::array;
using stockctl::test::bulk;
using stockctl::test::error;
using stockctl::test::integer;

namespace {

using Argv = std::vector<std::string>;

Argv script_sent(const Script& script, int numkeys, const Argv& rest) {
  Argv argv{"EVALSHA", std::string(script.sha1), std::to_string(numkeys)};
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

}  // namespace

TEST_CASE("a hold call sends the record, the index and three keys per line, then its lines") {
  HoldRequest request{"rec", "idx", "order", "o-1", 0, 60, 0, {}, nullptr};
  request.lines = {HoldCallLine{"a", "stock:{a}", 2, ""}, HoldCallLine{"b", "stock:{b}", 1, "5"}};
  const Call call = hold_call(request);
  CHECK(script_argv(call) == script_sent(hold_script(), 8,
                                         {"rec",
                                          "idx",
                                          "stock:{a}",
                                          "stock:{a}:holds",
                                          "stock:{a}:held",
                                          "stock:{b}",
                                          "stock:{b}:holds",
                                          "stock:{b}:held",
                                          "order",
                                          "o-1",
                                          "0",
                                          "60",
                                          "0",
                                          "",
                                          "",
                                          "",
                                          "3",
                                          "a",
                                          "2",
                                          "",
                                          "b",
                                          "1",
                                          "5"}));
  CHECK(call.idempotent);  // a repeat of the id answers its first answer
  CHECK(call.writes);
}

TEST_CASE("a hold call with the change log sends each line's log and the log's settings") {
  const ChangeLogSettings log{true, 50, "ops", "why"};
  HoldRequest request{"rec", "idx", "hold", "h", 600000, 86400, 30, {}, &log};
  request.lines = {HoldCallLine{"a", "stock:{a}", 1, ""}};
  const Argv argv = script_argv(hold_call(request));
  CHECK(argv[2] == "6");
  CHECK(argv[8] == log_key("stock:{a}"));
  CHECK(Argv(argv.begin() + 9, argv.end()) ==
        Argv{"hold", "h", "600000", "86400", "30", "50", "ops", "why", "4", "a", "1", ""});
}

TEST_CASE("the hold answer reads each line's code and stock, and a repeat's state") {
  const auto first = parse_hold_answer(
      array({integer(0), integer(99), integer(8), integer(8), integer(-2), integer(0)}), 2);
  REQUIRE(first);
  CHECK_FALSE(first->replayed);
  CHECK(first->expires_at_ms == 99);
  CHECK(first->lines[1].code == -2);
  CHECK_FALSE(first->all_lines_ok());
  const auto repeat =
      parse_hold_answer(array({bulk("released"), integer(99), integer(-1), integer(-1)}), 1);
  REQUIRE(repeat);
  CHECK(repeat->replayed);
  CHECK(repeat->since == "released");
  CHECK(repeat->all_lines_ok());  // unlimited is served
  CHECK_FALSE(parse_hold_answer(array({integer(0), integer(0)}), 1));
  CHECK_FALSE(parse_hold_answer(error("STOCKCTL_CORRUPT 0 x"), 1));
}

TEST_CASE("a settle call sends the record's lines' keys in its order, then the action") {
  SettleRequest request{"rec", "idx", "cancel", "o-1", {"stock:{b}", "stock:{a}"}, nullptr};
  CHECK(script_argv(settle_call(request)) ==
        script_sent(settle_script(), 8,
                    {"rec", "idx", "stock:{b}", "stock:{b}:holds", "stock:{b}:held", "stock:{a}",
                     "stock:{a}:holds", "stock:{a}:held", "cancel", "o-1", "", "", "", "3"}));
  const auto settled = parse_settle_reply(array({bulk("ok"), integer(1), integer(4), integer(-1)}));
  REQUIRE(settled);
  CHECK(settled->replayed);
  CHECK(settled->stocks == std::vector<std::int64_t>{4, -1});
  const auto missing = parse_settle_reply(array({bulk("missing"), integer(0)}));
  REQUIRE(missing);
  CHECK(missing->stocks.empty());
  CHECK_FALSE(parse_settle_reply(integer(1)));
  // "removed": the second element is the line (from 1) that no longer held its units.
  const auto removed =
      parse_settle_reply(array({bulk("removed"), integer(2), integer(10), integer(10)}));
  REQUIRE(removed);
  CHECK((removed->removed_line == 1 && !removed->replayed && removed->stocks.size() == 2));
  CHECK_FALSE(parse_settle_reply(array({bulk("removed"), integer(0), integer(10)})));
}

TEST_CASE("cart calls put the op and id first; the record's reply is read into its state") {
  const Call call = cart_call("rec", "due", "decide", "o-1", {"commit", "2"});
  CHECK(script_argv(call) ==
        script_sent(cart_script(), 2, {"rec", "due", "decide", "o-1", "commit", "2"}));
  CHECK(call.idempotent);
  const CartReply held = parse_cart_reply(array(
      {bulk("held"), integer(2), integer(99), integer(1), bulk("[]"), bulk("ok"), integer(0)}));
  REQUIRE(held.record);
  CHECK(held.record->state == CartState::held);
  CHECK(held.record->attempt == 2);
  CHECK(held.record->finished);
  const CartReply taken = parse_cart_reply(error("STOCKCTL_CONFLICT order"));
  REQUIRE(taken.record);
  CHECK(taken.record->conflict == "STOCKCTL_CONFLICT order");
  const CartReply odd = parse_cart_reply(array(
      {bulk("sold"), integer(2), integer(99), integer(1), bulk("[]"), bulk("ok"), integer(0)}));
  CHECK_FALSE(odd.record);
  CHECK_FALSE(parse_cart_reply(error("CLUSTERDOWN The cluster is down")).record);
}

TEST_CASE("carts_due, tombstone and reap calls and their replies") {
  CHECK(script_argv(carts_due_call("due", 200)) ==
        script_sent(carts_due_script(), 1, {"due", "200"}));
  CHECK(carts_due_call("due", 200).reads_only());
  CHECK(parse_carts_due(array({bulk("a"), bulk("b")})) == std::vector<std::string>{"a", "b"});
  CHECK_FALSE(parse_carts_due(error("LOADING")));
  CHECK(script_argv(tombstone_call("g", "!aborted", 5)) ==
        script_sent(tombstone_script(), 1, {"g", "!aborted", "60"}));  // kept a minute at least
  CHECK(parse_never_held(integer(2)) == true);
  CHECK(parse_never_held(integer(0)) == false);
  CHECK_FALSE(parse_never_held(bulk("0")));
  const ChangeLogSettings log{false, 50, "ops", ""};
  CHECK(script_argv(reap_call("idx", 200, log)) ==
        script_sent(reap_script(), 1, {"idx", "200", "", "ops", ""}));
  const auto reaped =
      parse_reap_reply(array({integer(2), integer(7), integer(1), array({bulk("h1")}),
                              array({bulk("stock:{a}"), integer(3)}), array({bulk("stock:{b}")})}));
  REQUIRE(reaped);
  CHECK((reaped->units == 7 && reaped->more && reaped->ids == std::vector<std::string>{"h1"}));
  CHECK(reaped->nowhere == std::vector<std::pair<std::string, std::int64_t>>{{"stock:{a}", 3}});
  CHECK(reaped->kept == std::vector<std::string>{"stock:{b}"});
  CHECK_FALSE(parse_reap_reply(
      array({integer(2), integer(7), integer(1), integer(0), array({}), array({})})));
  // The replies of the script before it named the items whose key was gone, or corrupt.
  CHECK_FALSE(parse_reap_reply(array({integer(2), integer(7), integer(1), array({bulk("h1")})})));
  CHECK_FALSE(parse_reap_reply(array(
      {integer(2), integer(7), integer(1), array({}), array({bulk("stock:{a}"), integer(1)})})));
  CHECK_FALSE(parse_reap_reply(array(
      {integer(2), integer(7), integer(1), array({}), array({bulk("stock:{a}")}), array({})})));
}
