#include "redis/scripts/stock.h"

#include <doctest/doctest.h>

#include "fake_node.h"

using namespace stockctl;
using stockctl::test::array;
using stockctl::test::integer;

TEST_CASE("the stock script's integer reply is the answer and the stock") {
  for (long long n : {0LL, 7LL, 9007199254740991LL, -1LL, -3LL}) {
    auto a = parse_stock_answer(integer(n));
    REQUIRE(a);
    CHECK(a->answer == n);
    CHECK(a->stock == n);
    CHECK_FALSE(a->replayed);
  }
}

TEST_CASE("the stock script's array reply carries the stock and the replay flag") {
  auto insufficient = parse_stock_answer(array({integer(-2), integer(3), integer(0)}));
  REQUIRE(insufficient);
  CHECK(insufficient->answer == -2);
  CHECK(insufficient->stock == 3);
  CHECK_FALSE(insufficient->replayed);
  auto replay = parse_stock_answer(array({integer(5), integer(5), integer(1)}));
  REQUIRE(replay);
  CHECK(replay->replayed);
}

TEST_CASE("any other reply is not a stock answer") {
  Reply text;
  text.type = Reply::Type::string;
  text.str = "5";
  CHECK_FALSE(parse_stock_answer(text));
  CHECK_FALSE(parse_stock_answer(array({integer(1), integer(1)})));
  CHECK_FALSE(parse_stock_answer(array({integer(1), text, integer(0)})));
  Reply error;
  error.type = Reply::Type::error;
  error.str = "ERR x";
  CHECK_FALSE(parse_stock_answer(error));
}
