#include "core/sku.h"

#include "core/hash_slot.h"

#include <doctest/doctest.h>

#include <array>
#include <string>

using namespace stockctl;

namespace {
const KeyScheme kTagged{"stock:", true};
const KeyScheme kClassic{"redis_key:stock:", false};
}  // namespace

TEST_CASE("stock keys carry the SKU as a hash tag by default") {
  CHECK(stock_key(kTagged, "42") == "stock:{42}");
  CHECK(stock_key(KeyScheme{"inv:", true}, "a b") == "inv:{a b}");
}

TEST_CASE("--no-hashtag gives the classic StockService layout") {
  CHECK(stock_key(kClassic, "42") == "redis_key:stock:42");
}

TEST_CASE("validate_sku rejects empty, long and control-character ids") {
  CHECK(validate_sku("", kTagged) == "an item id (SKU) cannot be empty");
  CHECK(validate_sku(std::string(512, 'x'), kTagged).empty());
  CHECK(validate_sku(std::string(513, 'x'), kTagged) ==
        "item id is 513 bytes long; at most 512 are allowed");
  CHECK_FALSE(validate_sku("a\tb", kTagged).empty());
  CHECK_FALSE(validate_sku(std::string("a\0b", 3), kTagged).empty());
  CHECK_FALSE(validate_sku("a\x7f", kTagged).empty());
  CHECK(validate_sku("caf\xc3\xa9 \"quoted\" x; touch pwned", kTagged).empty());
}

TEST_CASE("with hash tags a SKU may not contain braces") {
  CHECK_FALSE(validate_sku("a{b", kTagged).empty());
  CHECK_FALSE(validate_sku("a}b", kTagged).empty());
}

TEST_CASE("without hash tags a '}' needs a complete non-empty tag") {
  CHECK(validate_sku("a{b", kClassic).empty());      // no '}' at all: whole key is hashed
  CHECK(validate_sku("x{tag}y", kClassic).empty());  // a real tag
  CHECK_FALSE(validate_sku("a}b", kClassic).empty());
  CHECK_FALSE(validate_sku("a{}b}", kClassic).empty());  // empty tag, then a stray '}'
}

TEST_CASE("no item's key is in stockctl's own namespace") {
  // With --no-hashtag, --prefix stockctl: and item wait-mark, the key would be the WAIT's mark,
  // which a bulk run sets and deletes.
  const KeyScheme own_plain{"stockctl:", false};
  CHECK(validate_sku("wait-mark", own_plain) ==
        "key 'stockctl:wait-mark' is in stockctl's own namespace ('stockctl:'), where its locks, "
        "marks, buckets and hold records live; choose another --prefix");
  CHECK_FALSE(validate_sku("ctl:hold:x", KeyScheme{"stock", false}).empty());
  CHECK_FALSE(validate_sku("stockctl:cart:x", KeyScheme{"", false}).empty());
  CHECK_FALSE(validate_sku("42", KeyScheme{"stockctl:", true}).empty());
  CHECK(validate_sku("42", KeyScheme{"stockctl-", false}).empty());
  CHECK(validate_sku("stockctl:42", kTagged).empty());  // stock:{stockctl:42}
  CHECK_FALSE(sku_of_key(KeyScheme{"", false}, "stockctl:wait-mark").has_value());
}

TEST_CASE("companion keys hash to the same slot as the stock key") {
  for (const std::string& key : {std::string("stock:{42}"), std::string("redis_key:stock:42"),
                                 std::string("p:a{b"), std::string("x{tag}y")}) {
    CAPTURE(key);
    std::string lock = companion_key(key, ":lock");
    CHECK(hash_tag(lock) == hash_tag(key));
  }
  CHECK(companion_key("stock:{42}", ":lock") == "stock:{42}:lock");
  CHECK(companion_key("redis_key:stock:42", ":lock") == "{redis_key:stock:42}:lock");
}

TEST_CASE("hash_tag follows the Redis Cluster rules") {
  CHECK(hash_tag("stock:{42}") == "42");
  CHECK(hash_tag("{}x") == "{}x");
  CHECK(hash_tag("a{b}{c}") == "b");
  CHECK(hash_tag("plain") == "plain");
}

TEST_CASE("sku_of_key reads the item id back from a stock key, never from a companion key") {
  CHECK(sku_of_key(kTagged, "stock:{42}") == std::optional<std::string>("42"));
  CHECK_FALSE(sku_of_key(kTagged, "stock:{42}:lock"));
  CHECK_FALSE(sku_of_key(kTagged, "stock:{42}:log"));
  CHECK_FALSE(sku_of_key(kTagged, "stock:{42}:changes"));
  CHECK_FALSE(sku_of_key(kTagged, first_log_key("stock:{42}")));
  CHECK_FALSE(sku_of_key(kTagged, slot_log_key("stock:{42}")));
  CHECK_FALSE(sku_of_key(kTagged, "stock:{42}:req:abc}"));
  CHECK_FALSE(sku_of_key(kTagged, "stock:{42}:ids:86400:20423"));
  CHECK_FALSE(sku_of_key(kTagged, "stock:{}"));
  CHECK_FALSE(sku_of_key(kTagged, "other:{42}"));
  CHECK(sku_of_key(KeyScheme{"{t}:", true}, "{t}:{x}") == std::optional<std::string>("x"));
  CHECK_FALSE(sku_of_key(KeyScheme{"{t}:", true}, "{t}:{x}:log"));
}

TEST_CASE("sku_of_key without hash tags tells tagged stock keys from their companions") {
  CHECK(sku_of_key(kClassic, "redis_key:stock:42") == std::optional<std::string>("42"));
  CHECK(sku_of_key(kClassic, "redis_key:stock:42:lock") == std::optional<std::string>("42:lock"));
  CHECK_FALSE(sku_of_key(kClassic, "{redis_key:stock:42}:lock"));
  CHECK(sku_of_key(kClassic, "redis_key:stock:a{t}b") == std::optional<std::string>("a{t}b"));
  CHECK_FALSE(sku_of_key(kClassic, "redis_key:stock:a{t}b:lock"));
  CHECK_FALSE(sku_of_key(kClassic, "redis_key:stock:a{t}b:log"));
  CHECK_FALSE(sku_of_key(kClassic, "redis_key:stock:a{t}b:changes"));
  CHECK_FALSE(sku_of_key(kClassic, "redis_key:stock:a{t}b:first"));
  CHECK_FALSE(sku_of_key(kClassic, "redis_key:stock:a{t}b:req:r-1"));
  CHECK_FALSE(sku_of_key(kClassic, "redis_key:stock:a{t}b:ids:60:1"));
  CHECK_FALSE(validate_sku("a{t}b:ids:60:1", kClassic).empty());
  const KeyScheme one_slot{"{t}:", false};
  CHECK(sku_of_key(one_slot, "{t}:x") == std::optional<std::string>("x"));
  CHECK_FALSE(sku_of_key(one_slot, "{t}:x:log"));
}

TEST_CASE("an item's logs share its slot: its list, its stream of earlier versions, its slot's") {
  CHECK(log_key("stock:{42}") == "stock:{42}:changes");
  CHECK(stream_log_key("redis_key:stock:42") == "{redis_key:stock:42}:log");
  CHECK(key_slot(slot_log_key("stock:{42}")) == key_slot("stock:{42}"));
  CHECK(first_log_key("stock:{42}") == "stock:{42}:first");
  CHECK(first_log_key("redis_key:stock:42") == "{redis_key:stock:42}:first");
  CHECK(key_slot(slot_log_key("redis_key:stock:42")) == key_slot("redis_key:stock:42"));
  CHECK(slot_log_key("stock:{42}") == slot_log_key("other:{42}"));  // one per slot, any prefix
  CHECK(slot_log_key("stock:{42}").rfind("stockctl:log:{", 0) == 0);
}

TEST_CASE("the ledger's key names its request ttl and generation, in the stock key's slot") {
  CHECK(ledger_key("stock:{42}", 86400, 20423) == "stock:{42}:ids:86400:20423");
  CHECK(ledger_key("redis_key:stock:42", 60, 7) == "{redis_key:stock:42}:ids:60:7");
  // Unix time 425 with 60-second generations: generation 7, then 6 and 8.
  const std::array<std::string, 3> three = ledger_keys("stock:{42}", 60, 425);
  CHECK(three[0] == "stock:{42}:ids:60:7");
  CHECK(three[1] == "stock:{42}:ids:60:6");
  CHECK(three[2] == "stock:{42}:ids:60:8");
}

TEST_CASE("validate_sku refuses an id whose tagged key would read as a companion key") {
  CHECK(validate_sku("42:lock", kClassic).empty());  // untagged: its companions start with '{'
  CHECK_FALSE(validate_sku("a{t}b:lock", kClassic).empty());
  CHECK_FALSE(validate_sku("x:log", KeyScheme{"{t}:", false}).empty());
  CHECK_FALSE(validate_sku("x:first", KeyScheme{"{t}:", false}).empty());
  CHECK_FALSE(validate_sku("x:kept-logs", KeyScheme{"{t}:", false}).empty());
}

TEST_CASE("escape_glob makes the prefix match only itself") {
  CHECK(escape_glob("stock:") == "stock:");
  CHECK(escape_glob("p*[x]?\\:") == "p\\*\\[x\\]\\?\\\\:");
  CHECK(escape_glob("{t}:") == "{t}:");
}

TEST_CASE("accept_sku refuses white space around an id unless --trim asks to remove it") {
  std::string padded = "CH-1    ";
  CHECK(accept_sku(padded, kTagged) ==
        "item id 'CH-1    ' has white space at its start or end (--trim removes it)");
  CHECK(padded == "CH-1    ");
  std::string leading = " B-6";
  CHECK_FALSE(accept_sku(leading, kTagged).empty());
  std::string inner = "a b";
  CHECK(accept_sku(inner, kTagged).empty());

  KeyScheme trimming = kTagged;
  trimming.trim_skus = true;
  std::string tabbed = "\tB-6 \r";
  CHECK(accept_sku(tabbed, trimming).empty());
  CHECK(tabbed == "B-6");
  std::string blank = "   ";
  CHECK(accept_sku(blank, trimming) == "an item id (SKU) cannot be empty");
  std::string braced = " {x} ";
  CHECK_FALSE(accept_sku(braced, trimming).empty());  // trimmed, then checked as any id
}

TEST_CASE("trim_white_space removes ASCII white space at both ends only") {
  CHECK(trim_white_space("  a b \t") == "a b");
  CHECK(trim_white_space("ab") == "ab");
  CHECK(trim_white_space(" \t ").empty());
  CHECK(trim_white_space("").empty());
}

TEST_CASE("validate_sku takes UTF-8 ids and refuses bytes that are not UTF-8") {
  CHECK(validate_sku("caf\xC3\xA9-\xE2\x82\xAC", kTagged).empty());
  CHECK(validate_sku("\xFF\xFE", kTagged) == "item id is not valid UTF-8");
  CHECK(validate_sku("caf\xE9", kTagged) == "item id is not valid UTF-8");
}
