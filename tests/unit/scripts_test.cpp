#include <doctest/doctest.h>

#include "core/sku.h"
#include "fake_node.h"
#include "redis/call.h"
#include "redis/scripts/lock.h"
#include "redis/scripts/put.h"
#include "redis/scripts/registry.h"
#include "redis/scripts/stock.h"

using namespace stockctl;
using stockctl::test::array;
using stockctl::test::bulk;
using stockctl::test::integer;

namespace {

using Argv = std::vector<std::string>;

Argv evalsha(const Script& script, int numkeys, const Argv& rest) {
  Argv argv{"EVALSHA", std::string(script.sha1), std::to_string(numkeys)};
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}

}  // namespace

TEST_CASE("a deduction without request id or log sends the stock key alone") {
  Call call = stock_call(StockRequest{"{s:a}", "deduct", 2, "", 0, "", 60, nullptr});
  CHECK(script_argv(call) == evalsha(stock_script(), 1, {"{s:a}", "deduct", "2"}));
  CHECK_FALSE(call.idempotent);  // applied twice if resent
  CHECK(call.writes);
}

TEST_CASE("a stock call with request id and change log sends the ledger, then the log") {
  ChangeLogSettings log{true, 50, "ops", "recount"};
  // 1,000,000 s is in generation 11 of 86,400 s: the ledger's current, previous and next keys.
  Call call = stock_call(StockRequest{"{s:a}", "add", 3, "10", 5, "r1", 86400, &log, 1000000});
  CHECK(script_argv(call) ==
        evalsha(stock_script(), 5,
                {"{s:a}", "{s:a}:ids:86400:11", "{s:a}:ids:86400:10", "{s:a}:ids:86400:12",
                 "{s:a}:changes", "add", "3", "r1", "172800", "10", "5", "50", "ops", "recount"}));
  CHECK(call.idempotent);  // the ledger answers a repeat
}

TEST_CASE("a stock call with request id alone sends the id and the ledger's lifetime only") {
  Call call = stock_call(StockRequest{"s:a", "deduct", 1, "", 0, "r1", 60, nullptr, 119});
  CHECK(script_argv(call) == evalsha(stock_script(), 4,
                                     {"s:a", "{s:a}:ids:60:1", "{s:a}:ids:60:0", "{s:a}:ids:60:2",
                                      "deduct", "1", "r1", "120"}));
}

TEST_CASE("a stock call with an initial stock and no id leaves the id's arguments empty") {
  Call call = stock_call(StockRequest{"{s:a}", "deduct", 1, "7", 30, "", 60, nullptr});
  CHECK(script_argv(call) ==
        evalsha(stock_script(), 1, {"{s:a}", "deduct", "1", "", "", "7", "30"}));
  CHECK_FALSE(call.idempotent);
}

TEST_CASE("a disabled change log is not sent") {
  ChangeLogSettings off{false, 50, "ops", ""};
  Call call = stock_call(StockRequest{"{s:a}", "deduct", 1, "", 0, "", 60, &off});
  CHECK(call.numkeys == 1);
}

TEST_CASE("the load call sends each row's stock key and first entry's key, then its value") {
  ChangeLogSettings log{true, 50, "ops", "why"};
  Call call = load_call({LoadRow{"{s:a}", 7}, LoadRow{"{s:b}", -1}}, 30, log, "init");
  // The item's list is not sent: the script derives it when an entry goes there.
  CHECK(script_argv(call) == evalsha(load_script(), 4,
                                     {"{s:a}", "{s:a}:first", "{s:b}", "{s:b}:first", "30", "init",
                                      "50", "ops", "why", "7", "-1"}));
  CHECK(call.idempotent);  // SET NX: a resent call creates nothing twice
  CHECK(call.writes);
}

TEST_CASE("the put call sends the lock key, and the log keys third only when it writes") {
  ChangeLogSettings log{true, 50, "ops", ""};
  Call call = put_call(PutRequest{"{s:a}", 7, false, PutMode::for_init(), 0, &log, "init"});
  CHECK(script_argv(call) == evalsha(put_script(), 4,
                                     {"{s:a}", "{s:a}:lock", "{s:a}:changes", "{s:a}:first", "7",
                                      "create", "0", "1", "0", "init", "50", "ops", ""}));
  CHECK(call.idempotent);
  CHECK(call.writes);

  // With an expiry, an earlier version's slot hash too: its entry moves into the list.
  Call expiring = put_call(PutRequest{"{s:a}", 7, false, PutMode::for_init(), 60, &log, "init"});
  CHECK(script_argv(expiring) ==
        evalsha(put_script(), 5,
                {"{s:a}", "{s:a}:lock", "{s:a}:changes", "{s:a}:first", slot_log_key("{s:a}"), "7",
                 "create", "60", "1", "0", "init", "50", "ops", ""}));

  Call peek = put_call(
      PutRequest{"{s:a}", 7, true, PutMode::for_rebuild().with_dry_run(true), 0, &log, "rebuild"});
  CHECK(script_argv(peek) ==
        evalsha(put_script(), 2, {"{s:a}", "{s:a}:lock", "7", "peek", "0", "1", "1"}));
  CHECK_FALSE(peek.writes);
}

TEST_CASE("lock calls send the lock key and the token") {
  CHECK(script_argv(unlock_call("{s:a}:lock", "t")) ==
        evalsha(unlock_script(), 1, {"{s:a}:lock", "t"}));
  CHECK(script_argv(extend_call("{s:a}:lock", "t", 3000)) ==
        evalsha(extend_script(), 1, {"{s:a}:lock", "t", "3000"}));
  CHECK(parse_extend_answer(integer(1)));
  CHECK_FALSE(parse_extend_answer(integer(0)));
}

TEST_CASE("script answers of the wrong shape are refused, not guessed") {
  std::optional<StockAnswer> stock =
      parse_stock_answer(array({integer(-2), integer(4), integer(1)}));
  REQUIRE(stock);
  CHECK(stock->answer == -2);
  CHECK(stock->stock == 4);
  CHECK(stock->replayed);
  CHECK_FALSE(parse_stock_answer(array({integer(1), integer(2)})));
  CHECK_FALSE(parse_stock_answer(array({bulk("1"), integer(2), integer(0)})));

  Reply nil;
  std::optional<PutAnswer> put = parse_put_answer(array({bulk("created"), nil, integer(3)}));
  REQUIRE(put);
  CHECK(put->verdict == "created");
  CHECK_FALSE(put->previous);
  CHECK(put->held == 3);
  CHECK_FALSE(parse_put_answer(integer(1)));
  CHECK_FALSE(parse_put_answer(array({bulk("created"), nil})));
  CHECK_FALSE(parse_put_answer(array({bulk("created"), nil, integer(-1)})));
}

TEST_CASE("init and rebuild store a value less the units held, never below 0") {
  CHECK(stock_less_held(10, 3) == 7);
  CHECK(stock_less_held(2, 3) == 0);
  CHECK(stock_less_held(-1, 5) == -1);
}

TEST_CASE("plain calls say by name whether they may be resent and waited for") {
  CHECK(Call::read({"GET", "k"}).reads_only());
  Call del = Call::idempotent_write({"DEL", "k"});
  CHECK(del.idempotent);
  CHECK(del.writes);
  Call lock = Call::once({"SET", "k", "t", "NX"});
  CHECK_FALSE(lock.idempotent);
  CHECK_FALSE(lock.writes);
  CHECK(script_argv(lock) == Argv{"SET", "k", "t", "NX"});
}
