#include "core/outcome.h"

#include <doctest/doctest.h>

#include "core/error_reply.h"
#include "core/quantity.h"
#include "core/rebuild_plan.h"

using namespace stockctl;

namespace {
ItemResult item() {
  ItemResult i;
  i.op = "deduct";
  i.sku = "42";
  i.key = "stock:{42}";
  i.qty = 2;
  return i;
}
}  // namespace

TEST_CASE("deduct answers map to statuses") {
  ItemResult i = item();
  apply_deduct_answer(i, 98, 98);
  CHECK(i.status == Status::ok);
  CHECK(i.stock == 98);
  apply_deduct_answer(i, -2, 1);
  CHECK(i.status == Status::insufficient);
  CHECK(i.stock == 1);
  apply_deduct_answer(i, -1, -1);
  CHECK(i.status == Status::unlimited);
  CHECK_FALSE(i.stock.has_value());
  apply_deduct_answer(i, -3, -3);
  CHECK(i.status == Status::uninitialized);
  apply_deduct_answer(i, -7, -7);
  CHECK(i.status == Status::error);
}

TEST_CASE("add answers map to statuses") {
  ItemResult i = item();
  apply_add_answer(i, 12, 12);
  CHECK(i.status == Status::ok);
  apply_add_answer(i, -1, -1);
  CHECK(i.status == Status::unlimited);
  apply_add_answer(i, -3, -3);
  CHECK(i.status == Status::missing);
  CHECK_FALSE(i.stock.has_value());
}

TEST_CASE("stored values for get") {
  ItemResult i = item();
  apply_stored_value(i, std::nullopt);
  CHECK(i.status == Status::missing);
  apply_stored_value(i, std::string("-1"));
  CHECK(i.status == Status::unlimited);
  apply_stored_value(i, std::string("abc"));
  CHECK(i.status == Status::error);
  CHECK(i.error == "stored value 'abc' of stock:{42} is not a stock value; left unchanged");
}

TEST_CASE("script error replies become clear messages") {
  ItemResult i = item();
  apply_error_reply(i, "STOCKCTL_CORRUPT abc");
  CHECK(i.error == "stored value 'abc' of stock:{42} is not a stock value; left unchanged");
  apply_error_reply(i, "MOVED 3999 127.0.0.1:7002");
  CHECK(i.error.find("use --cluster") != std::string::npos);
  apply_error_reply(i, "OOM command not allowed when used memory > 'maxmemory'.");
  CHECK(i.status == Status::error);
  CHECK(i.error.rfind("redis error on stock:{42}: OOM", 0) == 0);
}

TEST_CASE("rebuild: a live value that differs is drift, and untouched") {
  ItemResult i = item();
  PutMode rebuild{true, false, false};
  apply_put_verdict(i, "kept", std::string("10"), 7, rebuild);
  CHECK(i.status == Status::drift);
  CHECK(i.stock == 10);
  CHECK(i.expected == 7);
  apply_put_verdict(i, "kept", std::string("7"), 7, rebuild);
  CHECK(i.status == Status::exists);
  apply_put_verdict(i, "created", std::nullopt, 7, rebuild);
  CHECK(i.status == Status::ok);
  CHECK(i.stock == 7);
  apply_put_verdict(i, "locked", std::nullopt, 7, rebuild);
  CHECK(i.status == Status::busy);
}

TEST_CASE("rebuild --force and --dry-run") {
  ItemResult i = item();
  apply_put_verdict(i, "replaced", std::string("10"), 7, PutMode::for_rebuild().with_force(true));
  CHECK(i.status == Status::ok);
  CHECK(i.stock == 7);
  CHECK(put_script_mode(PutMode::for_rebuild().with_force(true).with_dry_run(true)) == "peek");
  apply_put_verdict(i, "kept", std::string("10"), 7,
                    PutMode::for_rebuild().with_force(true).with_dry_run(true));
  CHECK(i.status == Status::ok);  // would overwrite
  apply_put_verdict(i, "absent", std::nullopt, 7, PutMode::for_rebuild().with_dry_run(true));
  CHECK(i.status == Status::ok);
}

TEST_CASE("init reports an existing key as exists with its stock, and corrupt as error") {
  ItemResult i = item();
  PutMode init{false, false, false};
  apply_put_verdict(i, "kept", std::string("10"), 7, init);
  CHECK(i.status == Status::exists);
  CHECK(i.stock == 10);
  apply_put_verdict(i, "kept", std::string("abc"), 7, init);
  CHECK(i.status == Status::error);
}

TEST_CASE("a forced write reports the value it replaced, null when the key was missing") {
  ItemResult i = item();
  PutMode init_force{false, true, false};
  apply_put_verdict(i, "replaced", std::string("7"), 7, init_force);
  CHECK(i.status == Status::ok);  // the file's value already, but the write was forced
  CHECK(i.forced);
  CHECK(i.previous == std::optional<std::string>("7"));
  apply_put_verdict(i, "created", std::nullopt, 7, init_force);
  CHECK(i.status == Status::ok);
  CHECK(i.forced);
  CHECK_FALSE(i.previous);
  apply_put_verdict(i, "replaced", std::string("junk"), 7, PutMode::for_rebuild().with_force(true));
  CHECK(i.previous == std::optional<std::string>("junk"));
  apply_put_verdict(i, "kept", std::string("7"), 7,
                    PutMode::for_rebuild().with_force(true).with_dry_run(true));
  CHECK(i.status == Status::ok);  // a forced dry run says what the real run would replace
  CHECK(i.previous == std::optional<std::string>("7"));
  apply_put_verdict(i, "locked", std::nullopt, 7, init_force);
  CHECK_FALSE(i.forced);
  apply_put_verdict(i, "created", std::nullopt, 7, PutMode::for_init());
  CHECK_FALSE(i.forced);  // only --force reports "previous"
}

TEST_CASE("a request id used before is told in words, not as the ledger's record") {
  ItemResult i = item();
  i.request_id = "r1";
  apply_error_reply(i, "STOCKCTL_CONFLICT deduct 5 95 95");
  CHECK(i.status == Status::conflict);
  CHECK(i.error == "request id 'r1' was already used for deduct 5 on this item; nothing changed");
}

TEST_CASE("a server's error text is kept on one line") {
  ItemResult i = item();
  apply_error_reply(i, "ERR one\ntwo");
  CHECK(i.error == "redis error on stock:{42}: ERR one\\ntwo");
}

TEST_CASE("a refusal before the command ran says a write was not applied; a read only why") {
  ItemResult i = item();
  apply_error_reply(i, "CLUSTERDOWN The cluster is down (4 tries over 10000 ms)");
  CHECK(i.status == Status::error);
  CHECK(i.error ==
        "not applied: stock:{42}: refused before it ran: CLUSTERDOWN The cluster is down (4 tries "
        "over 10000 ms)");
  ItemResult read = item();
  read.op = "get";
  apply_error_reply(read, "LOADING Redis is loading the dataset in memory");
  CHECK(read.error ==
        "stock:{42}: refused before it ran: LOADING Redis is loading the dataset in memory");
}

TEST_CASE("NOPERM names the key patterns and the recipe stockctl needs") {
  ItemResult i = item();
  apply_error_reply(i, "NOPERM No permissions to access a key");
  CHECK(i.status == Status::error);
  CHECK(i.error ==
        "refused on stock:{42}: NOPERM No permissions to access a key; the Redis user lacks an "
        "ACL permission stockctl needs: the key patterns ~stock:* (the items and their companion "
        "keys) and ~stockctl:* (hold records, the rebuild lock, change logs), and the commands of "
        "the ACL recipe in the README");
  ItemResult own = item();
  own.key = "stockctl:hold:stock:{c1}";
  apply_error_reply(own, "ERR ACL failure in script: No permissions to access a key");
  CHECK(own.error.find("the key patterns ~stock:* (the items") != std::string::npos);
  ItemResult log = item();
  log.key = "stockctl:log:{7}";
  apply_error_reply(log, "NOPERM No permissions to access a key");
  CHECK(log.error.find("~<prefix>*") != std::string::npos);
}

TEST_CASE("an unlimited value written is unlimited, as get says, forced or in a dry run") {
  ItemResult i = item();
  apply_put_verdict(i, "created", std::nullopt, kUnlimited, PutMode::for_init());
  CHECK(i.status == Status::unlimited);
  CHECK_FALSE(i.stock);
  apply_put_verdict(i, "replaced", std::string("5"), kUnlimited,
                    PutMode::for_init().with_force(true));
  CHECK(i.status == Status::unlimited);
  CHECK(i.forced);
  CHECK(i.previous == std::optional<std::string>("5"));
  apply_put_verdict(i, "absent", std::nullopt, kUnlimited,
                    PutMode::for_rebuild().with_dry_run(true));
  CHECK(i.status == Status::unlimited);
  apply_put_verdict(i, "kept", std::string("-1"), kUnlimited, PutMode::for_init());
  CHECK(i.status == Status::exists);  // nothing was written: it was there
  CHECK(is_written(Status::unlimited));
  CHECK_FALSE(is_written(Status::exists));
}

TEST_CASE("rebuild names a drifting or extra item in one line") {
  ItemResult i = item();
  apply_put_verdict(i, "kept", std::string("10"), 7, PutMode::for_rebuild());
  CHECK(finding_line(i) == "drift: item '42': stock:{42} holds 10, the source says 7");
  apply_put_verdict(i, "kept", std::string("-1"), 7, PutMode::for_rebuild());
  CHECK(finding_line(i) == "drift: item '42': stock:{42} holds unlimited, the source says 7");
  apply_put_verdict(i, "kept", std::string("3"), kUnlimited, PutMode::for_rebuild());
  CHECK(finding_line(i) == "drift: item '42': stock:{42} holds 3, the source says unlimited");
  i.status = Status::extra;
  CHECK(finding_line(i) ==
        "extra: item '42': stock:{42} is in Redis and the source has no row for it");
  i.status = Status::ok;
  CHECK(finding_line(i).empty());
  CHECK(more_findings_line(Status::drift, 1, true) ==
        "and 1 more item with drift (--report lists every one)");
  CHECK(more_findings_line(Status::extra, 5, false) ==
        "and 5 more extra items (--report FILE lists every one)");
}

TEST_CASE("what became of a write is said once") {
  CHECK(not_applied("no connection") == "not applied: no connection");
  CHECK(outcome_unknown("talking to a:1: no answer") ==
        "outcome unknown: talking to a:1: no answer");
  // A reason that already says it (a message built below, passed up again) is not prefixed twice.
  CHECK(outcome_unknown("outcome unknown: 0 of 1 replicas acknowledged") ==
        "outcome unknown: 0 of 1 replicas acknowledged");
  CHECK(not_applied("not applied: interrupted") == "not applied: interrupted");
  CHECK(not_applied("outcome unknown: lost") == "outcome unknown: lost");
  ItemResult item;
  set_not_applied(item, "not applied: interrupted");
  CHECK(item.error == "not applied: interrupted");
}

TEST_CASE("a key of another type is named, the first the script reaches") {
  ItemResult r;
  r.op = "deduct";
  r.stock = 4;
  const std::vector<KeyType> fine{{"stock:{A}", "string", "string", "a stock value"},
                                  {"stock:{A}:ids:86400:1", "none", "hash", "a request ledger"}};
  CHECK_FALSE(apply_wrong_type(r, fine));
  CHECK(r.stock == 4);
  std::vector<KeyType> keys = fine;
  keys[1].type = "string";
  CHECK(apply_wrong_type(r, keys));
  CHECK(r.status == Status::error);
  CHECK_FALSE(r.stock.has_value());
  CHECK(r.error.rfind("stock:{A}:ids:86400:1 holds a string, not a request ledger (a hash; "
                      "WRONGTYPE); nothing changed",
                      0) == 0);
  keys[0].type = "list";  // the first key the script reaches is the one it stopped at
  CHECK(apply_wrong_type(r, keys));
  CHECK(r.error.rfind("stock:{A} holds a list, not a stock value (a string; WRONGTYPE); "
                      "nothing changed",
                      0) == 0);
}

TEST_CASE("a change log of another type: the change was made whole, its entry is missing") {
  ItemResult r;
  r.op = "deduct";
  r.stock = 4;
  apply_error_reply(r, "STOCKCTL_LOG_LOST stock:{A}:changes");
  CHECK(r.status == Status::error);
  CHECK_FALSE(r.stock.has_value());
  CHECK(r.error.rfind("applied, but its change log entry was not written: stock:{A}:changes "
                      "holds another kind of value than the change log (a list; WRONGTYPE)",
                      0) == 0);
  CHECK(classify_error_reply("STOCKCTL_LOG_LOST x") == ErrorReply::stockctl_log_lost);
}
