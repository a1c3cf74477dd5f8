#include <doctest/doctest.h>

#include <string>

#include "redis/reply.h"

using namespace stockctl;

namespace {

// Parses `bytes`, which must hold exactly one complete reply.
Reply whole(const std::string& bytes) {
  Reply out;
  std::size_t used = 0;
  REQUIRE(parse_reply(bytes, out, used) == ReplyParse::complete);
  CHECK(used == bytes.size());
  return out;
}

ReplyParse status_of(const std::string& bytes) {
  Reply out;
  std::size_t used = 0;
  return parse_reply(bytes, out, used);
}

}  // namespace

TEST_CASE("each RESP2 reply type is parsed into its Reply") {
  Reply ok = whole("+OK\r\n");
  CHECK(ok.type == Reply::Type::status);
  CHECK(ok.str == "OK");
  Reply err = whole("-MOVED 3999 127.0.0.1:6381\r\n");
  CHECK(err.is_error());
  CHECK(err.str == "MOVED 3999 127.0.0.1:6381");
  Reply n = whole(":-42\r\n");
  CHECK(n.type == Reply::Type::integer);
  CHECK(n.integer == -42);
  Reply s = whole("$5\r\na\r\nbc\r\n");  // a bulk string may hold CR LF
  CHECK(s.type == Reply::Type::string);
  CHECK(s.str == "a\r\nbc");
  CHECK(whole("$0\r\n\r\n").str.empty());
  CHECK(whole("$-1\r\n").is_nil());
  CHECK(whole("*-1\r\n").is_nil());
  Reply empty = whole("*0\r\n");
  CHECK(empty.type == Reply::Type::array);
  CHECK(empty.elements.empty());
}

TEST_CASE("nested arrays keep their elements in order") {
  Reply slots = whole("*1\r\n*3\r\n:0\r\n:5460\r\n*2\r\n$9\r\n127.0.0.1\r\n:7000\r\n");
  REQUIRE(slots.elements.size() == 1);
  const Reply& range = slots.elements[0];
  REQUIRE(range.elements.size() == 3);
  CHECK(range.elements[1].integer == 5460);
  CHECK(range.elements[2].elements[0].str == "127.0.0.1");
  CHECK(range.elements[2].elements[1].integer == 7000);
}

TEST_CASE("replies one after another are parsed one at a time") {
  const std::string bytes = "+OK\r\n$-1\r\n:7\r\n";
  std::size_t at = 0;
  std::vector<Reply> got;
  while (at < bytes.size()) {
    Reply r;
    std::size_t used = 0;
    REQUIRE(parse_reply(std::string_view(bytes).substr(at), r, used) == ReplyParse::complete);
    at += used;
    got.push_back(r);
  }
  REQUIRE(got.size() == 3);
  CHECK(got[0].str == "OK");
  CHECK(got[1].is_nil());
  CHECK(got[2].integer == 7);
}

TEST_CASE("every proper prefix of a reply is partial") {
  const std::string bytes = "*3\r\n+OK\r\n$4\r\nab\r\n\r\n*2\r\n:1\r\n$-1\r\n";
  CHECK(whole(bytes).elements.size() == 3);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    CHECK(status_of(bytes.substr(0, n)) == ReplyParse::partial);
  }
}

TEST_CASE("bytes that are not RESP2 are invalid, with the reason") {
  Reply out;
  std::size_t used = 0;
  CHECK(parse_reply("?what\r\n", out, used) == ReplyParse::invalid);
  CHECK(out.str == "got '?' as reply type byte");
  CHECK(status_of(":12x\r\n") == ReplyParse::invalid);
  CHECK(status_of("$-2\r\n") == ReplyParse::invalid);
  CHECK(status_of("$2\r\nabc\r\n") == ReplyParse::invalid);
  CHECK(status_of("*1\r\n!x\r\n") == ReplyParse::invalid);
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "*1\r\n";
  CHECK(status_of(deep + ":1\r\n") == ReplyParse::invalid);
}

TEST_CASE("an array count larger than the bytes received is partial, not a huge allocation") {
  CHECK(status_of("*2000000000\r\n:1\r\n") == ReplyParse::partial);
}
