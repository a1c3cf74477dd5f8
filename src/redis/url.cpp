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
  if (!n.ok() || text.empty()) return "the database is not a number";
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

std::string parse_port(std::string_view port, int& out) {
  ParsedNumber n = parse_bounded(port, 65535);
  if (port.empty() || !n.ok() || n.value == 0) {
    return "the port is not a number from 1 to 65535";
  }
  out = static_cast<int>(n.value);
  return {};
}

std::string parse_host_port(std::string_view hp, std::string& host, int& port) {
  if (hp.empty()) return {};
  if (hp.front() == '[') {  // [IPv6]:port
    auto close = hp.find(']');
    if (close == std::string_view::npos) return "unclosed '[' in the host";
    host = std::string(hp.substr(1, close - 1));
    std::string_view rest = hp.substr(close + 1);
    if (rest.empty()) return {};
    if (rest.front() != ':') return "unexpected text after ']'";
    return parse_port(rest.substr(1), port);
  }
  auto colon = hp.rfind(':');
  if (colon != 0) host = std::string(hp.substr(0, colon));
  if (colon == std::string_view::npos) return {};
  return parse_port(hp.substr(colon + 1), port);
}

/// Takes the user info off the front of `rest` (up to the last '@', so a password may hold
/// '/', '?' or '@'; nothing before that '@' ever appears in a message), and refuses a query:
/// a redis:// URL has no parameters, and one like `?password=...` must not be taken for a
/// port or a database and echoed.
std::string split_userinfo(std::string_view& rest, RedisUrl& url) {
  auto at = rest.rfind('@');
  if (at != std::string_view::npos) {
    if (std::string e = parse_userinfo(rest.substr(0, at), url); !e.empty()) return e;
    rest = rest.substr(at + 1);
  }
  if (rest.find('?') != std::string_view::npos) {
    return "a redis:// URL takes no query parameters (give a password before the host: "
           "redis://:PASSWORD@host, or with --password-file)";
  }
  return {};
}

std::string parse_tcp(std::string_view rest, RedisUrl& url) {
  if (std::string e = split_userinfo(rest, url); !e.empty()) return e;
  auto slash = rest.find('/');
  if (slash != std::string_view::npos && slash + 1 < rest.size()) {
    if (std::string e = parse_db(rest.substr(slash + 1), url.db); !e.empty()) return e;
  }
  return parse_host_port(rest.substr(0, slash), url.host, url.port);
}

std::string parse_sentinel(std::string_view rest, RedisUrl& url) {
  url.kind = RedisUrl::Kind::sentinel;
  if (std::string e = split_userinfo(rest, url); !e.empty()) return e;
  auto slash = rest.find('/');
  std::string_view hosts = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  auto next = path.find('/');
  url.master = std::string(path.substr(0, next));
  if (url.master.empty()) return "a sentinel URL names the master: redis+sentinel://host/MASTER";
  if (next != std::string_view::npos && next + 1 < path.size()) {
    if (std::string e = parse_db(path.substr(next + 1), url.db); !e.empty()) return e;
  }
  while (!hosts.empty()) {
    auto comma = hosts.find(',');
    SentinelAddress& s = url.sentinels.emplace_back();
    s.host = "127.0.0.1";
    if (std::string e = parse_host_port(hosts.substr(0, comma), s.host, s.port); !e.empty()) {
      return e;
    }
    hosts = comma == std::string_view::npos ? "" : hosts.substr(comma + 1);
  }
  if (url.sentinels.empty()) url.sentinels.push_back(SentinelAddress{"127.0.0.1", 26379});
  return {};
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
  auto scheme = [&](std::string_view name) {
    if (text.rfind(name, 0) != 0) return false;
    text.remove_prefix(name.size());
    return true;
  };
  if (scheme("redis://")) return parse_tcp(text, url);
  if (scheme("unix://")) return parse_unix(text, url);
  url.tls = true;
  if (scheme("rediss://")) return parse_tcp(text, url);
  if (scheme("rediss+sentinel://")) return parse_sentinel(text, url);
  url.tls = false;
  if (scheme("redis+sentinel://")) return parse_sentinel(text, url);
  return "a URL must start with redis://, rediss://, unix://, redis+sentinel:// or "
         "rediss+sentinel://";
}

std::string describe_endpoint(const RedisUrl& url) {
  if (url.kind == RedisUrl::Kind::unix_socket) return fmt::format("unix:{}", url.path);
  if (url.kind == RedisUrl::Kind::sentinel) {
    return fmt::format("master '{}' (via {} sentinel(s))", url.master, url.sentinels.size());
  }
  if (url.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", url.host, url.port);
  return fmt::format("{}:{}", url.host, url.port);
}

}  // namespace stockctl
