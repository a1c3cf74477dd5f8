#include "redis/pipelined_connections.h"

#include <algorithm>

#include "base/errors.h"
#include "redis/call.h"
#include "redis/errors.h"

namespace stockctl {

PipelinedConnections::PipelinedConnections(const ConnectOptions& options, std::size_t count,
                                           ScriptCalls calls, const ConnectionFactory& open)
    : PipelinedConnections(std::vector<ConnectOptions>(count, options), calls, open) {}

PipelinedConnections::PipelinedConnections(const std::vector<ConnectOptions>& each,
                                           ScriptCalls calls, const ConnectionFactory& open)
    : timeout_ms_(each.empty() ? 0 : each.front().timeout_ms), outstanding_(each.size(), 0) {
  connections_.reserve(each.size());
  for (const ConnectOptions& options : each) {
    connections_.push_back(open(options));
    connections_.back()->set_script_calls(calls);
  }
}

void PipelinedConnections::send(std::size_t connection, const Call& call) {
  Connection& conn = *connections_[connection];
  append_call(conn, call);
  conn.flush();
  ++outstanding_[connection];
  ++outstanding_total_;
}

Reply PipelinedConnections::next_reply(std::size_t connection) {
  Reply reply = connections_[connection]->read();
  --outstanding_[connection];
  --outstanding_total_;
  return reply;
}

Reply PipelinedConnections::call(std::size_t connection, const Call& call) {
  send(connection, call);
  return next_reply(connection);
}

bool PipelinedConnections::deliver_replies(const OnReply& on_reply) {
  polled_fds_.clear();
  polled_.clear();
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    if (outstanding_[i] == 0) continue;
    polled_fds_.push_back(pollfd{connections_[i]->fd(), POLLIN, 0});
    polled_.push_back(i);
  }
  if (polled_fds_.empty()) return true;
  if (poll(polled_fds_.data(), polled_fds_.size(), static_cast<int>(timeout_ms_)) <= 0) {
    return false;
  }
  for (std::size_t k = 0; k < polled_fds_.size(); ++k) {
    if (polled_fds_[k].revents != 0) read_connection(polled_[k], on_reply);
  }
  return true;
}

void PipelinedConnections::read_connection(std::size_t index, const OnReply& on_reply) {
  // Only the calls outstanding now: those on_reply sends are read on a later round, and a
  // connection with nothing more to answer is not read again (no needless read call).
  const std::size_t expected = outstanding_[index];
  for (std::size_t n = 0; n < expected; ++n) {
    std::optional<Reply> reply;
    try {
      reply = connections_[index]->read_ready();
      if (!reply) return;  // part of a reply; the rest comes later
    } catch (const ConnectionError&) {
      connections_[index].reset();
      const std::size_t lost = outstanding_[index];
      outstanding_total_ -= lost;
      outstanding_[index] = 0;
      for (std::size_t i = 0; i < lost; ++i) on_reply(index, std::nullopt);
      return;
    }
    --outstanding_[index];
    --outstanding_total_;
    on_reply(index, reply);
  }
}

namespace {

// Loads the Functions library of each script once on `node`; false as soon as the server
// refuses one.
bool libraries_loaded(Client& client, const std::string& node,
                      const std::vector<const Script*>& scripts) {
  std::vector<const Library*> loaded;
  for (const Script* script : scripts) {
    if (std::find(loaded.begin(), loaded.end(), script->library) != loaded.end()) continue;
    if (!library_loaded(client.call_on(node, Call::read(load_library_argv(*script))))) {
      return false;
    }
    loaded.push_back(script->library);
  }
  return true;
}

}  // namespace

ScriptCalls load_scripts_for_raw_calls(Client& client, const std::vector<const Script*>& scripts) {
  // On every primary: raw connections may go to any of them (a split item's buckets).
  const std::vector<std::string> nodes = client.primaries();
  bool functions = true;
  for (const std::string& node : nodes)
    functions = functions && libraries_loaded(client, node, scripts);
  if (functions) return ScriptCalls::functions;
  for (const std::string& node : nodes) {
    for (const Script* script : scripts) {
      Reply reply = client.call_on(node, Call::read({"SCRIPT", "LOAD", std::string(script->body)}));
      if (reply.is_error()) throw StockctlError(reply.str);
    }
  }
  return ScriptCalls::evalsha;
}

}  // namespace stockctl
