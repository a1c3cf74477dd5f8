#include "redis/sentinel.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "redis/errors.h"

namespace stockctl {
namespace {

ConnectOptions sentinel_options(const ConnectOptions& options, const SentinelAddress& sentinel) {
  ConnectOptions s;
  s.url.host = sentinel.host;
  s.url.port = sentinel.port;
  s.user = options.sentinel_user;
  s.password = options.sentinel_password;
  s.connect_timeout_ms = options.connect_timeout_ms;
  s.timeout_ms = options.timeout_ms;
  s.tls = options.tls;
  return s;
}

/// The master's address as `sentinel` knows it, or why there is none.
std::optional<ConnectOptions> ask(const ConnectOptions& options, const SentinelAddress& sentinel,
                                  std::string& why) {
  ConnectOptions s = sentinel_options(options, sentinel);
  Connection conn(s);
  Reply reply = conn.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options.url.master});
  if (reply.is_error()) {
    why = fmt::format("sentinel {}: {}", conn.where(), reply.str);
    return std::nullopt;
  }
  if (reply.type != Reply::Type::array || reply.elements.size() != 2) {
    why = fmt::format("sentinel {} does not know a master named '{}'", conn.where(),
                      options.url.master);
    return std::nullopt;
  }
  ConnectOptions data = options;
  data.url.kind = RedisUrl::Kind::tcp;
  data.url.host = reply.elements[0].str;
  data.url.port = std::atoi(reply.elements[1].str.c_str());
  return data;
}

bool is_master(Connection& conn) {
  Reply role = conn.command({"ROLE"});
  return role.type == Reply::Type::array && !role.elements.empty() &&
         role.elements[0].str == "master";
}

}  // namespace

std::unique_ptr<Connection> connect_to_master(const ConnectOptions& options) {
  std::vector<std::string> said;
  for (const SentinelAddress& sentinel : options.url.sentinels) {
    try {
      std::string why;
      std::optional<ConnectOptions> data = ask(options, sentinel, why);
      if (!data) {
        said.push_back(why);
        continue;
      }
      auto conn = std::make_unique<Connection>(*data);
      if (is_master(*conn)) return conn;
      // Mid-failover a sentinel may still name the old master, now a replica.
      said.push_back(fmt::format("{} is not a master (ROLE)", conn->where()));
    } catch (const ConnectionError& e) {
      said.emplace_back(e.what());
    }
  }
  std::string all;
  for (const std::string& s : said) all += (all.empty() ? "" : "; ") + s;
  throw ConnectionError(
      fmt::format("no sentinel led to a master '{}': {}", options.url.master, all));
}

}  // namespace stockctl
