#include "app/context.h"

#include <fmt/format.h>

#include <iostream>

#include "app/connect_options.h"
#include "base/diagnostics.h"
#include "redis/clients/open_client.h"
#include "redis/errors.h"

namespace stockctl {

namespace {

OutputStyle output_style(const CommonOptions& options) {
  if (options.table) return OutputStyle::table;
  return options.pretty ? OutputStyle::pretty : OutputStyle::json;
}

}  // namespace

Context::Context(Program& program)
    : options_(program.common),
      stats_(program.stats),
      scheme_(key_scheme(program.common)),
      change_log_(change_log_settings(program.common)),
      out_(std::cout, output_style(program.common)) {}

namespace {

Topology topology_of(const CommonOptions& options) {
  return options.cluster ? Topology::cluster : Topology::standalone;
}

}  // namespace

std::unique_ptr<Client> Context::new_client() const {
  return open_client(topology_of(options_), connect_options(options_), client_options(options_));
}

std::unique_ptr<PipelinedConnections> Context::open_pipelined(std::size_t count,
                                                              ScriptCalls calls) const {
  return std::make_unique<PipelinedConnections>(connect_options(options_), count, calls);
}

Client& Context::redis() {
  if (!client_) {
    ConnectOptions options = connect_options(options_);
    try {
      client_ = open_client(topology_of(options_), options, client_options(options_));
    } catch (const AuthenticationError& e) {
      throw AuthenticationError(
          fmt::format("{}; {}", e.what(), password_sources(options_, options)));
    }
    print_info(fmt::format("connected to {} (db {}{})", describe_endpoint(options.url),
                           options.url.db, options.user ? ", user " + *options.user : ""));
  }
  return *client_;
}

Client* Context::redis_or_null() {
  if (client_) return client_.get();
  if (!connect_error_.empty()) return nullptr;
  try {
    return &redis();
  } catch (const ConnectionError& e) {
    connect_error_ = e.what();
    print_error(connect_error_);
    return nullptr;
  }
}

void Context::emit(const ItemResult& item, ExitFold& fold) {
  out_.write(item);
  stats_.add(item.status);
  fold.add(item.status);
}

}  // namespace stockctl
