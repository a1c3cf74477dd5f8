#include "app/context.h"

#include <fmt/format.h>

#include <iostream>

#include "base/diagnostics.h"

#include "redis/cluster/router.h"
#include "redis/errors.h"
#include "redis/standalone_client.h"

namespace stockctl {

Context::Context(Program& program)
    : options_(program.common),
      stats_(program.stats),
      scheme_(key_scheme(program.common)),
      change_log_(change_log_settings(program.common)),
      out_(std::cout, program.common.pretty) {}

std::unique_ptr<Client> Context::new_client() const {
  ConnectOptions options = connect_options(options_);
  if (options_.cluster) return std::make_unique<ClusterClient>(options, client_options(options_));
  return std::make_unique<StandaloneClient>(options, client_options(options_));
}

Client& Context::redis() {
  if (!client_) {
    ConnectOptions options = connect_options(options_);
    try {
      if (options_.cluster) {
        client_ = std::make_unique<ClusterClient>(options, client_options(options_));
      } else {
        client_ = std::make_unique<StandaloneClient>(options, client_options(options_));
      }
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
