#include "redis/url.h"

#include <fmt/format.h>

#include "core/quantity.h"

namespace stockctl {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percent_decode(std::string_view in, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out.push_back(in[i]);
      continue;
    }
    int hi = i + 1 < in.size() ? hex_value(in[i + 1]) : -1;
    int lo = i + 2 < in.size() ? hex_value(in[i + 2]) : -1;
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

std::string parse_db(std::string_view text, int& db) {
  ParsedNumber n = parse_bounded(text, 1 << 20);
  if (!n.ok() || text.empty()) return fmt::format("database '{}' is not a number", text);
  db = static_cast<int>(n.value);
  return {};
}

std::string parse_userinfo(std::string_view info, RedisUrl& url) {
  auto colon = info.find(':');
  std::string user, password;
  if (!percent_decode(info.substr(0, colon), user)) return "bad percent-escape in the user name";
  if (!user.empty()) url.user = user;
  if (colon != std::string_view::npos) {
    if (!percent_decode(info.substr(colon + 1), password)) {
      return "bad percent-escape in the password";
    }
    url.password = password;
  }
  return {};
}

std::string parse_port(std::string_view port, RedisUrl& url) {
  ParsedNumber n = parse_bounded(port, 65535);
  if (port.empty() || !n.ok() || n.value == 0) {
    return fmt::format("port '{}' is not a number from 1 to 65535", port);
  }
  url.port = static_cast<int>(n.value);
  return {};
}

std::string parse_host_port(std::string_view hp, RedisUrl& url) {
  if (hp.empty()) return {};
  if (hp.front() == '[') {  // [IPv6]:port
    auto close = hp.find(']');
    if (close == std::string_view::npos) return "unclosed '[' in the host";
    url.host = std::string(hp.substr(1, close - 1));
    std::string_view rest = hp.substr(close + 1);
    if (rest.empty()) return {};
    if (rest.front() != ':') return "unexpected text after ']'";
    return parse_port(rest.substr(1), url);
  }
  auto colon = hp.rfind(':');
  if (colon != 0) url.host = std::string(hp.substr(0, colon));
  if (colon == std::string_view::npos) return {};
  return parse_port(hp.substr(colon + 1), url);
}

std::string parse_tcp(std::string_view rest, RedisUrl& url) {
  // The user info ends at the last '@', so a password may hold '/', '?' or '@' without being
  // mistaken for the path; nothing before that '@' ever appears in a message.
  auto at = rest.rfind('@');
  if (at != std::string_view::npos) {
    if (std::string e = parse_userinfo(rest.substr(0, at), url); !e.empty()) return e;
    rest = rest.substr(at + 1);
  }
  auto slash = rest.find('/');
  if (slash != std::string_view::npos && slash + 1 < rest.size()) {
    if (std::string e = parse_db(rest.substr(slash + 1), url.db); !e.empty()) return e;
  }
  return parse_host_port(rest.substr(0, slash), url);
}

std::string parse_unix(std::string_view rest, RedisUrl& url) {
  url.kind = RedisUrl::Kind::unix_socket;
  auto q = rest.find('?');
  url.path = std::string(rest.substr(0, q));
  if (url.path.empty() || url.path.front() != '/') return "a unix:// URL needs an absolute path";
  if (q == std::string_view::npos) return {};
  std::string_view query = rest.substr(q + 1);
  if (query.rfind("db=", 0) != 0) return "the only query parameter of a unix:// URL is db=N";
  return parse_db(query.substr(3), url.db);
}

}  // namespace

std::string parse_redis_url(std::string_view text, RedisUrl& url) {
  url = RedisUrl{};
  constexpr std::string_view redis = "redis://", unix_scheme = "unix://";
  if (text.rfind(redis, 0) == 0) return parse_tcp(text.substr(redis.size()), url);
  if (text.rfind(unix_scheme, 0) == 0) return parse_unix(text.substr(unix_scheme.size()), url);
  if (text.rfind("rediss://", 0) == 0) return "TLS (rediss://) is not supported";
  return "a URL must start with redis:// or unix://";
}

std::string describe_endpoint(const RedisUrl& url) {
  if (url.kind == RedisUrl::Kind::unix_socket) return fmt::format("unix:{}", url.path);
  if (url.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", url.host, url.port);
  return fmt::format("{}:{}", url.host, url.port);
}

}  // namespace stockctl
