#include <cstdint>
#include <cstdlib>
#include <string>

#include "redis/url.h"

using stockctl::RedisUrl;

namespace {

// A password made of the characters most likely to confuse a URL parser.
constexpr const char* kSecret = "S/E?C[R]E#T:x@y";

void check_parsed(const RedisUrl& url) {
  if (url.kind == RedisUrl::Kind::tcp && (url.port < 1 || url.port > 65535)) std::abort();
  if (url.db < 0) std::abort();
  if (url.kind == RedisUrl::Kind::unix_socket && url.path.empty()) std::abort();
  if (url.kind == RedisUrl::Kind::sentinel) {
    if (url.master.empty() || url.sentinels.empty()) std::abort();
    for (const auto& s : url.sentinels) {
      if (s.port < 1 || s.port > 65535) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  RedisUrl url;
  if (stockctl::parse_redis_url(text, url).empty()) check_parsed(url);

  // Whatever follows the user info, an error never repeats the password, and a parsed URL
  // holds it exactly (unless the text brings an '@' of its own, which ends the user info later).
  std::string with_secret = std::string("redis://user:") + kSecret + "@" + text;
  std::string error = stockctl::parse_redis_url(with_secret, url);
  for (const char* piece : {"E#T", "S/E"}) {
    // (A piece the text itself brings after the '@' may be quoted back; the password's may not.)
    if (error.find(piece) != std::string::npos && text.find(piece) == std::string::npos) {
      std::abort();
    }
  }
  if (error.empty()) {
    check_parsed(url);
    if (text.find('@') == std::string::npos && url.password != kSecret) std::abort();
  }
  return 0;
}
