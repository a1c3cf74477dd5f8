#include "output/json_writer.h"

#include <doctest/doctest.h>

#include <sstream>

using namespace stockctl;

TEST_CASE("item lines keep the contract's key order") {
  ItemResult i;
  i.op = "deduct";
  i.sku = "42";
  i.key = "stock:{42}";
  i.qty = 2;
  i.has_qty = true;
  i.status = Status::ok;
  i.stock = 998;
  CHECK(item_json(i).dump() ==
        R"({"op":"deduct","sku":"42","key":"stock:{42}","qty":2,"status":"ok","stock":998})");
}

TEST_CASE("unknown stock is null and errors carry a message") {
  ItemResult i;
  i.op = "get";
  i.sku = "x";
  i.key = "stock:{x}";
  i.status = Status::error;
  i.error = "boom";
  CHECK(item_json(i).dump() ==
        R"({"op":"get","sku":"x","key":"stock:{x}","status":"error","stock":null,"error":"boom"})");
}

TEST_CASE("summaries list every status count") {
  Summary s;
  s.op = "init";
  s.source = "a.csv";
  s.rows = 3;
  s.counts[Status::ok] = 2;
  s.counts[Status::exists] = 1;
  auto j = summary_json(s);
  CHECK(j["counts"]["ok"] == 2);
  CHECK(j["counts"]["exists"] == 1);
  CHECK(j["counts"]["drift"] == 0);
  CHECK(j["dry_run"] == false);
  CHECK(j.begin().key() == "op");
}

TEST_CASE("invalid UTF-8 in a SKU does not stop the output") {
  std::ostringstream out;
  JsonWriter w(out, OutputStyle::json);
  ItemResult i;
  i.op = "get";
  i.sku = "\xff";
  i.key = "k";
  w.write(item_json(i));
  CHECK(out.str().find("\"sku\":\"\xEF\xBF\xBD\"") != std::string::npos);
}

TEST_CASE("--table: rows wait for their block, a summary follows them one field per line") {
  std::ostringstream out;
  {
    JsonWriter w(out, OutputStyle::table);
    ItemResult i;
    i.op = "get";
    i.sku = "A";
    i.key = "stock:{A}";
    i.status = Status::ok;
    i.stock = 5;
    w.write(i);
    CHECK(out.str().empty());  // a row waits for its block
    w.write_summary(nlohmann::ordered_json{{"op", "x"}, {"rows", 1}});
  }
  CHECK(out.str() ==
        "op   sku  key        status  stock\n"
        "get  A    stock:{A}  ok          5\n"
        "\n"
        "op    x\n"
        "rows  1\n");
}

TEST_CASE("--table: the rows a table still holds are printed when the writer ends") {
  std::ostringstream out;
  {
    JsonWriter w(out, OutputStyle::table);
    w.write(nlohmann::ordered_json{{"n", 2}});
  }
  CHECK(out.str() == "n\n2\n");
}

TEST_CASE("the fast item writer prints exactly what the JSON library prints") {
  std::vector<std::string> texts = {"42",
                                    "a \"quoted\" sku",
                                    "back\\slash",
                                    "tab\there",
                                    "nl\nx",
                                    std::string("nul\0x", 5),
                                    "\x01\x1f\x7f",
                                    "caf\xc3\xa9",
                                    "\xe2\x82\xac",
                                    "\xf0\x9f\x98\x80",
                                    "",
                                    "\xff",
                                    "a\xc3",
                                    "\xed\xa0\x80"};
  for (const std::string& text : texts) {
    CAPTURE(text);
    ItemResult i;
    i.op = "deduct";
    i.sku = text;
    i.key = text.empty() ? "" : "stock:{" + text + "}";
    i.qty = 3;
    i.has_qty = true;
    i.status = Status::drift;
    i.stock = 9007199254740991;
    i.expected = -1;
    i.replayed = true;
    i.error = text;
    std::string fast;
    append_item_line(fast, i);
    std::string slow =
        item_json(i).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    CHECK(fast == slow);
  }
}

TEST_CASE("a forced write's previous value: a number, -1 for unlimited, the raw text, or null") {
  const std::vector<std::pair<std::optional<std::string>, std::string>> cases = {
      {std::string("12"), "12"},
      {std::string("-1"), "-1"},
      {std::string("j\"unk"), "\"j\\\"unk\""},
      {std::nullopt, "null"}};
  for (const auto& [previous, shown] : cases) {
    ItemResult i;
    i.op = "init";
    i.sku = "x";
    i.key = "stock:{x}";
    i.status = Status::ok;
    i.stock = 5;
    i.forced = true;
    i.previous = previous;
    std::string fast;
    append_item_line(fast, i);
    CHECK(fast ==
          "{\"op\":\"init\",\"sku\":\"x\",\"key\":\"stock:{x}\",\"status\":\"ok\","
          "\"stock\":5,\"previous\":" +
              shown + "}\n");
    CHECK(fast == item_json(i).dump() + "\n");
  }
}

TEST_CASE("the fast writer leaves optional fields out as the contract says") {
  ItemResult i;
  i.op = "get";
  i.sku = "x";
  i.key = "stock:{x}";
  i.status = Status::missing;
  std::string line;
  append_item_line(line, i);
  CHECK(line ==
        "{\"op\":\"get\",\"sku\":\"x\",\"key\":\"stock:{x}\",\"status\":\"missing\",\"stock\":null}"
        "\n");
}

TEST_CASE("a note comes last, in both writers, and only when there is one") {
  ItemResult i;
  i.op = "init";
  i.sku = "a";
  i.key = "stock:{a}";
  i.status = Status::exists;
  i.stock = 7;
  i.note = kMaybeOwnWrite;
  const std::string expected =
      R"({"op":"init","sku":"a","key":"stock:{a}","status":"exists","stock":7,)"
      R"("note":"outcome of an earlier try unknown; the key may be this run's own write"})";
  CHECK(item_json(i).dump() == expected);
  std::string line;
  append_item_line(line, i);
  CHECK(line == expected + "\n");
  i.note.clear();
  CHECK(item_json(i).dump().find("note") == std::string::npos);
}

TEST_CASE("a split item's buckets, and each bucket with --details, print alike in both writers") {
  ItemResult i;
  i.op = "get";
  i.sku = "A";
  i.key = "stock:{A}";
  i.status = Status::ok;
  i.stock = 7;
  i.has_held = true;
  i.held = 0;
  i.buckets = 2;
  i.details = true;
  i.bucket_details = {{"stockctl:bucket:{1}:stock:{A}:aa:0", 3, "127.0.0.1:7000"},
                      {"stockctl:bucket:{2}:stock:{A}:aa:1", std::nullopt, ""}};
  std::string fast;
  append_item_line(fast, i);
  CHECK(fast ==
        "{\"op\":\"get\",\"sku\":\"A\",\"key\":\"stock:{A}\",\"status\":\"ok\",\"stock\":7,"
        "\"held\":0,\"buckets\":2,\"ttl\":null,\"lock_ttl\":null,\"bucket_details\":["
        "{\"key\":\"stockctl:bucket:{1}:stock:{A}:aa:0\",\"stock\":3,\"node\":\"127.0.0.1:7000\"},"
        "{\"key\":\"stockctl:bucket:{2}:stock:{A}:aa:1\",\"stock\":null,\"node\":null}]}\n");
  CHECK(fast == item_json(i).dump() + "\n");
}

TEST_CASE("rebalance's units moved print after the buckets, alike in both writers") {
  ItemResult i;
  i.op = "rebalance";
  i.sku = "A";
  i.key = "stock:{A}";
  i.status = Status::ok;
  i.stock = 40;
  i.buckets = 4;
  i.moved = 30;
  std::string fast;
  append_item_line(fast, i);
  CHECK(fast ==
        "{\"op\":\"rebalance\",\"sku\":\"A\",\"key\":\"stock:{A}\",\"status\":\"ok\",\"stock\":40,"
        "\"buckets\":4,\"moved\":30}\n");
  CHECK(fast == item_json(i).dump() + "\n");
  i.moved.reset();
  CHECK(item_json(i).dump().find("moved") == std::string::npos);
}
