#include "redis/sentinel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/diagnostics.h"
#include "core/replication.h"
#include "redis/errors.h"
#include "redis/role.h"

namespace stockctl {
namespace {

// A sentinel is asked once per window: one that stalls must not hold a window for the whole
// --timeout.
constexpr long long kWatchTimeoutMs = 1000;

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

void append_question(Connection& conn, const std::string& master, bool replicas = false) {
  conn.append({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", master});
  conn.append({"SENTINEL", "MASTER", master});
  if (replicas) conn.append({"SENTINEL", "REPLICAS", master});
}

long long config_epoch(const Reply& master) {
  std::vector<std::string> fields;
  fields.reserve(master.elements.size());
  for (const Reply& field : master.elements) fields.push_back(field.str);
  return sentinel_config_epoch(fields);
}

int live_replicas(const Reply& list) {
  std::vector<std::vector<std::string>> replicas;
  for (const Reply& replica : list.elements) {
    std::vector<std::string>& fields = replicas.emplace_back();
    for (const Reply& field : replica.elements) fields.push_back(field.str);
  }
  return sentinel_live_replicas(replicas);
}

/// Reads the replies to append_question(): the master's address, or why there is none; with
/// `replicas`, the replicas the sentinel sees alive for it (asked with replicas = true).
std::optional<SentinelAnswer> read_answer(Connection& conn, const std::string& master,
                                          std::string& why, int* replicas = nullptr) {
  Reply addr = conn.read();
  Reply info = conn.read();
  if (replicas != nullptr) *replicas = live_replicas(conn.read());
  if (addr.is_error()) {
    why = fmt::format("sentinel {}: {}", conn.where(), addr.str);
    return std::nullopt;
  }
  if (addr.type != Reply::Type::array || addr.elements.size() != 2) {
    why = fmt::format("sentinel {} does not know a master named '{}'", conn.where(), master);
    return std::nullopt;
  }
  RedisUrl url;
  url.host = addr.elements[0].str;
  url.port = std::atoi(addr.elements[1].str.c_str());
  return SentinelAnswer{describe_endpoint(url), config_epoch(info), conn.where()};
}

/// Every sentinel's answer, in the URL's order; what the others said goes to `said`.
/// `refused` counts the sentinels that refused for good (our credentials, TLS): asking them again
/// cannot help. `replicas[i]`: the replicas the sentinel of answer i knows for its master.
std::vector<SentinelAnswer> ask_all(const ConnectOptions& options, const ConnectionFactory& open,
                                    std::vector<std::string>& said, std::size_t& refused,
                                    std::vector<int>& replicas) {
  std::vector<SentinelAnswer> answers;
  refused = 0;
  for (const SentinelAddress& sentinel : options.url.sentinels) {
    try {
      std::unique_ptr<Connection> conn = open(sentinel_options(options, sentinel));
      append_question(*conn, options.url.master, true);
      std::string why;
      int known = 0;
      if (auto answer = read_answer(*conn, options.url.master, why, &known)) {
        answers.push_back(*answer);
        replicas.push_back(known);
      } else {
        said.push_back(why);
      }
    } catch (const FatalConnectionError& e) {
      said.emplace_back(e.what());
      ++refused;
    } catch (const ConnectionError& e) {
      said.emplace_back(e.what());
    }
  }
  return answers;
}

ConnectOptions data_options(const ConnectOptions& options, const std::string& address) {
  ConnectOptions data = options;
  const auto colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
  data.url.kind = RedisUrl::Kind::tcp;
  data.url.host = host;
  data.url.port = std::atoi(address.c_str() + colon + 1);
  return data;
}

// For --verbose: which master stockctl was sent to, and by which sentinels (an operator behind
// Sentinel otherwise cannot tell where the writes went).
std::string named_by(const std::vector<SentinelAnswer>& answers, const std::string& address,
                     const std::string& master) {
  std::string who;
  long long epoch = 0;
  std::size_t count = 0;
  for (const SentinelAnswer& a : answers) {
    if (a.address != address) continue;
    who += (who.empty() ? "" : ", ") + a.sentinel;
    epoch = std::max(epoch, a.config_epoch);
    ++count;
  }
  return fmt::format(
      "{} {} {} {} as master '{}' (config epoch {}); connected to it, ROLE says master",
      count == 1 ? "sentinel" : "sentinels", who, count == 1 ? "names" : "name", address, master,
      epoch);
}

}  // namespace

std::unique_ptr<Connection> connect_to_master(const ConnectOptions& options,
                                              const ConnectionFactory& open) {
  std::vector<std::string> said;
  std::size_t refused = 0;
  std::vector<int> replicas;
  const std::vector<SentinelAnswer> answers = ask_all(options, open, said, refused, replicas);
  if (refused > 0 && refused == options.url.sentinels.size()) {
    // Every sentinel refused our credentials (or TLS): said once, not retried for
    // --retry-timeout as a sentinel that is down would be.
    std::string all;
    for (const std::string& s : said) all += (all.empty() ? "" : "; ") + s;
    throw FatalConnectionError(
        fmt::format("no sentinel led to a master '{}': {}", options.url.master, all));
  }
  for (const std::string& address : sentinels_masters_to_try(answers)) {
    try {
      std::unique_ptr<Connection> conn = open(data_options(options, address));
      if (ask_role(*conn).is_master()) {
        print_info(named_by(answers, address, options.url.master));
        int known = 0;
        for (std::size_t i = 0; i < answers.size(); ++i) {
          if (answers[i].address == address) known = std::max(known, replicas[i]);
        }
        conn->set_sentinel_replicas(known);
        return conn;
      }
      // Mid-failover: the sentinels name a replica that is still being promoted (or a lagging
      // one names the old master, now a replica). Retried within --retry-timeout.
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

SentinelWatch::SentinelWatch(const ConnectOptions& options) : name_(options.url.master) {
  for (const SentinelAddress& sentinel : options.url.sentinels) {
    Link link;
    link.options = sentinel_options(options, sentinel);
    link.options.connect_timeout_ms = std::min(link.options.connect_timeout_ms, kWatchTimeoutMs);
    link.options.timeout_ms = std::min(link.options.timeout_ms, kWatchTimeoutMs);
    links_.push_back(std::move(link));
  }
}

SentinelWatch::~SentinelWatch() = default;

std::optional<std::string> SentinelWatch::master() {
  const auto now = Clock::now();
  // Every sentinel is asked before any answer is read: one round trip for all of them.
  for (Link& link : links_) {
    if (!link.conn && now < link.retry_at) continue;
    try {
      if (!link.conn) link.conn = std::make_unique<Connection>(link.options);
      append_question(*link.conn, name_);
      link.conn->flush();
    } catch (const ConnectionError&) {
      link.conn.reset();
      link.retry_at = now + std::chrono::seconds(1);
    }
  }
  std::vector<SentinelAnswer> answers;
  for (Link& link : links_) {
    if (!link.conn) continue;
    try {
      std::string why;
      if (auto answer = read_answer(*link.conn, name_, why)) answers.push_back(*answer);
    } catch (const ConnectionError&) {
      link.conn.reset();
      link.retry_at = now + std::chrono::seconds(1);
    }
  }
  return sentinels_master(answers);
}

}  // namespace stockctl
