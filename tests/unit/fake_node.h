#pragma once

// Scripted Redis nodes for unit tests: a client under test opens them through the
// ConnectionFactory seam instead of sockets. Each node answers every command it is sent with
// its `answer` function and records the command, so a test can drive the cluster redirect loop,
// the lock protocol or script reloading step by step and then read what went over the "wire".
// An answer that throws ConnectionError breaks the connection there: the replies before it are
// read, then reading its reply fails, as when a node dies with a command on the wire.

#include <fmt/format.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "redis/connection.h"
#include "redis/errors.h"

namespace stockctl::test {

using Argv = std::vector<std::string>;
/// What a node answers to one command.
using Answer = std::function<Reply(const Argv& argv)>;

inline Reply status(const std::string& text) {
  Reply r;
  r.type = Reply::Type::status;
  r.str = text;
  return r;
}

inline Reply error(const std::string& text) {
  Reply r;
  r.type = Reply::Type::error;
  r.str = text;
  return r;
}

inline Reply bulk(const std::string& text) {
  Reply r;
  r.type = Reply::Type::string;
  r.str = text;
  return r;
}

inline Reply nil() { return Reply{}; }

inline Reply integer(long long n) {
  Reply r;
  r.type = Reply::Type::integer;
  r.integer = n;
  return r;
}

inline Reply array(std::vector<Reply> elements) {
  Reply r;
  r.type = Reply::Type::array;
  r.elements = std::move(elements);
  return r;
}

/// A CLUSTER SLOTS reply that gives every slot to the node at 127.0.0.1:`port`.
inline Reply all_slots_at(int port) {
  return array({array({integer(0), integer(16383), array({bulk("127.0.0.1"), integer(port)})})});
}

/// One scripted node. Replies are computed when a command is appended and handed back by read()
/// or read_ready(), in order, as a pipelined server would.
class FakeNode : public Connection {
 public:
  FakeNode(std::string where, Answer answer, std::vector<Argv>& log)
      : Connection(std::move(where)), answer_(std::move(answer)), log_(log) {}

  using Connection::append;
  void append(std::initializer_list<std::string_view> head, const Argv& tail) override {
    Argv argv(head.begin(), head.end());
    argv.insert(argv.end(), tail.begin(), tail.end());
    log_.push_back(argv);
    try {
      queued_.emplace_back(answer_(argv), std::string());
    } catch (const ConnectionError& e) {
      queued_.emplace_back(Reply{}, e.what());
    }
  }
  Reply read() override {
    if (queued_.empty()) throw ConnectionError(where() + ": read with nothing sent");
    auto [r, broken] = std::move(queued_.front());
    queued_.pop_front();
    if (!broken.empty()) throw ConnectionError(broken);
    return r;
  }
  void flush() override {}
  /// Every reply is there as soon as its command is appended.
  std::optional<Reply> read_ready() override {
    if (queued_.empty()) return std::nullopt;
    return read();
  }
  /// No socket: poll() ignores a negative descriptor.
  int fd() const override { return -1; }

 private:
  Answer answer_;
  std::vector<Argv>& log_;
  std::deque<std::pair<Reply, std::string>> queued_;  ///< each reply, or why it never comes
};

/// Fake nodes by port on 127.0.0.1: what each answers, and every command each was sent.
class FakeNodes {
 public:
  /// Makes the node at `port` answer with `answer` (a port with none refuses connections).
  void add(int port, Answer answer) { answers_[port] = std::move(answer); }
  /// Every command the node at `port` was sent, in order.
  const std::vector<Argv>& sent(int port) { return sent_[port]; }
  /// How many times the node at `port` was sent `command` (its first word).
  std::size_t count(int port, const std::string& command) {
    std::size_t n = 0;
    for (const Argv& argv : sent_[port]) n += !argv.empty() && argv[0] == command ? 1 : 0;
    return n;
  }
  /// The seam a client opens its connections through.
  ConnectionFactory factory() {
    return [this](const ConnectOptions& options) -> std::unique_ptr<Connection> {
      const int port = options.url.port;
      auto it = answers_.find(port);
      if (it == answers_.end()) {
        throw ConnectionError(fmt::format("127.0.0.1:{}: connection refused", port));
      }
      return std::make_unique<FakeNode>(fmt::format("127.0.0.1:{}", port), it->second, sent_[port]);
    };
  }
  /// Options that name the node at `port`.
  static ConnectOptions at(int port) {
    ConnectOptions options;
    options.url.port = port;
    return options;
  }

 private:
  std::map<int, Answer> answers_;
  std::map<int, std::vector<Argv>> sent_;
};

}  // namespace stockctl::test
