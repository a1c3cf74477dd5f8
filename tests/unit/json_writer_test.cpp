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
  JsonWriter w(out, false);
  ItemResult i;
  i.op = "get";
  i.sku = "\xff";
  i.key = "k";
  w.write(item_json(i));
  CHECK(out.str().find("\"sku\":\"\xEF\xBF\xBD\"") != std::string::npos);
}
