#include "core/change_log.h"

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <string_view>

using namespace stockctl;

TEST_CASE("parse_log_entry reads what the scripts write, null where a field is absent") {
  LogEntry e = parse_log_entry("1764536400123-0", {{"change", "deduct"},
                                                   {"after", "7"},
                                                   {"actor", "ann"},
                                                   {"qty", "3"},
                                                   {"before", "10"},
                                                   {"request_id", "r1"}});
  CHECK(e.time_ms == 1764536400123);
  CHECK(e.change == "deduct");
  CHECK(e.qty == 3);
  CHECK(e.before == 10);
  CHECK(e.after == 7);
  CHECK(e.request_id == std::optional<std::string>("r1"));
  CHECK_FALSE(e.reason);
  CHECK_FALSE(e.hold_id);
  CHECK(parse_log_entry("1-0", {{"change", "init"}, {"after", "-1"}}).after == -1);
  CHECK_FALSE(parse_log_entry("1-0", {{"before", "abc"}}).before);
  LogEntry blank = parse_log_entry("1-0", {{"qty", ""}, {"request_id", ""}, {"reason", ""}});
  CHECK_FALSE(blank.qty);
  CHECK_FALSE(blank.request_id);
  CHECK_FALSE(blank.reason);
}

namespace {
// The fields joined with the separator lua/include/log_entry.lua writes.
std::string packed(std::initializer_list<std::string_view> fields) {
  std::string out;
  for (std::string_view f : fields) {
    if (!out.empty()) out += '\x1f';
    out += f;
  }
  return out;
}
}  // namespace

TEST_CASE("parse_packed_log_entry reads what lua/include/log_entry.lua packs") {
  auto e = parse_packed_log_entry(
      packed({"1764536400123-4", "deduct", "3", "10", "7", "r1", "", "3", "annstock", "take"}));
  REQUIRE(e);
  CHECK(e->id == "1764536400123-4");
  CHECK(e->time_ms == 1764536400123);
  CHECK(e->change == "deduct");
  CHECK(e->qty == 3);
  CHECK(e->before == 10);
  CHECK(e->after == 7);
  CHECK(e->request_id == std::optional<std::string>("r1"));
  CHECK_FALSE(e->hold_id);
  CHECK(e->actor == std::optional<std::string>("ann"));
  CHECK(e->reason == std::optional<std::string>(packed({"stock", "take"})));  // all the rest

  auto init = parse_packed_log_entry(packed({"5-0", "init", "", "", "-1", "", "h1", "1", "a"}));
  REQUIRE(init);
  CHECK_FALSE(init->qty);
  CHECK_FALSE(init->before);
  CHECK(init->after == -1);
  CHECK(init->hold_id == std::optional<std::string>("h1"));
  CHECK_FALSE(init->reason);

  CHECK_FALSE(parse_packed_log_entry(""));
  CHECK_FALSE(parse_packed_log_entry(packed({"5-0", "init"})));  // too few fields
  CHECK_FALSE(parse_packed_log_entry(packed({"5-0", "init", "", "", "1", "", "", "9", "ab"})));
  CHECK_FALSE(parse_packed_log_entry(packed({"x-0", "init", "", "", "1", "", "", "0", ""})));
}

TEST_CASE("a load's first entry is packed as lua/include/log_entry.lua packs a first key's") {
  const LoadEntryPacker packer(1764536400123, "init", ChangeLogSettings{true, 50, "ann", "why"});
  CHECK(packer.entry(42) == packed({"1764536400123", "init", "42", "3", "annwhy"}));
  auto e = parse_first_log_entry(packer.entry(-1));
  REQUIRE(e);
  CHECK(e->id == "1764536400123-0");
  CHECK(e->time_ms == 1764536400123);
  CHECK(e->change == "init");
  CHECK_FALSE(e->qty);
  CHECK_FALSE(e->before);
  CHECK(e->after == -1);
  CHECK_FALSE(e->request_id);
  CHECK_FALSE(e->hold_id);
  CHECK(e->actor == std::optional<std::string>("ann"));
  CHECK(e->reason == std::optional<std::string>("why"));
  const LoadEntryPacker plain(7, "rebuild", ChangeLogSettings{true, 50, "x@h", ""});
  auto r = parse_first_log_entry(plain.entry(0));
  REQUIRE(r);
  CHECK(r->after == 0);
  CHECK_FALSE(r->reason);

  CHECK_FALSE(parse_first_log_entry(""));
  CHECK_FALSE(parse_first_log_entry(packed({"7", "init", "1"})));             // too few fields
  CHECK_FALSE(parse_first_log_entry(packed({"7-0", "init", "1", "0", ""})));  // a list's id
  CHECK_FALSE(parse_first_log_entry(packed({"7", "", "1", "0", ""})));        // no change
  CHECK_FALSE(parse_first_log_entry(packed({"7", "init", "1", "5", "ab"})));  // actor too long
}

TEST_CASE("the first entry is placed among the list's by its time") {
  auto entry = [](std::int64_t ms, const char* id) {
    LogEntry e;
    e.id = id;
    e.time_ms = ms;
    return e;
  };
  auto ids = [](const std::vector<LogEntry>& entries) {
    std::vector<std::string> out;
    out.reserve(entries.size());
    for (const LogEntry& e : entries) out.push_back(e.id);
    return out;
  };
  std::vector<LogEntry> list{entry(10, "10-1"), entry(20, "20-2")};
  place_first_entry(list, entry(10, "10-0"));  // the usual case: first, even in the same ms
  CHECK(ids(list) == std::vector<std::string>{"10-0", "10-1", "20-2"});

  std::vector<LogEntry> kept{entry(10, "10-1"), entry(20, "20-2")};
  place_first_entry(kept, entry(15, "15-0"));  // a key loaded again after its list's first entries
  CHECK(ids(kept) == std::vector<std::string>{"10-1", "15-0", "20-2"});

  std::vector<LogEntry> alone;
  place_first_entry(alone, entry(5, "5-0"));
  CHECK(ids(alone) == std::vector<std::string>{"5-0"});
}

TEST_CASE("parse_log_time takes epoch ms and ISO 8601") {
  std::string error;
  CHECK(parse_log_time("1764536400000", error) == 1764536400000);
  CHECK(parse_log_time("2025-11-30T21:00:00Z", error) == 1764536400000);
  CHECK(parse_log_time("2025-11-30T22:00:00+01:00", error) == 1764536400000);
  CHECK(parse_log_time("2025-11-30T21:00:00.250Z", error) == 1764536400250);
  CHECK(parse_log_time("2025-11-30", error) == 1764460800000);
  CHECK(parse_log_time("1970-01-01T00:00Z", error) == 0);
  CHECK(error.empty());
  CHECK_FALSE(parse_log_time("yesterday", error));
  CHECK_FALSE(error.empty());
  CHECK_FALSE(parse_log_time("2025-13-01", error));
  CHECK_FALSE(parse_log_time("2025-11-30T25:00Z", error));
  CHECK_FALSE(parse_log_time("2026-02-30T00:00:00Z", error));  // no such day
  CHECK_FALSE(parse_log_time("2026-02-29", error));
  CHECK(parse_log_time("2028-02-29", error) == 1835395200000);  // a leap year's
  CHECK_FALSE(parse_log_time("2100-02-29", error));             // not every fourth year is one
  CHECK_FALSE(parse_log_time("18446744073709551616", error));   // past 2^63, not clamped
  CHECK_FALSE(parse_log_time("", error));
}

TEST_CASE("log times print as ISO 8601 UTC with milliseconds, and read back the same") {
  CHECK(format_log_time(0) == "1970-01-01T00:00:00.000Z");
  CHECK(format_log_time(1764536400000) == "2025-11-30T21:00:00.000Z");
  CHECK(format_log_time(951782400123) == "2000-02-29T00:00:00.123Z");
  CHECK(format_log_time(4102444799999) == "2099-12-31T23:59:59.999Z");
  std::string error;
  for (std::int64_t ms : {std::int64_t{0}, std::int64_t{1764536400000}, std::int64_t{951782400123},
                          std::int64_t{1798761599500}}) {
    CHECK(parse_log_time(format_log_time(ms), error) == ms);
  }
}
