#include "app/context.h"

#include <fmt/format.h>

#include <iostream>

#include "app/connect_options.h"
#include "base/diagnostics.h"
#include "core/quantity.h"
#include "redis/clients/open_client.h"
#include "redis/errors.h"
#include "redis/tls.h"

namespace stockctl {

namespace {

OutputStyle output_style(const CommonOptions& options) {
  if (options.table) return OutputStyle::table;
  return options.pretty ? OutputStyle::pretty : OutputStyle::json;
}

}  // namespace

Context::Context(Program& program)
    : options_(program.common),
      writes_(writes_stock(program.op)),
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
  return open_client(topology_of(options_), connect_options(options_),
                     client_options(options_, writes_));
}

std::unique_ptr<PipelinedConnections> Context::open_pipelined(std::size_t count,
                                                              ScriptCalls calls) const {
  return std::make_unique<PipelinedConnections>(connect_options(options_), count, calls);
}

std::unique_ptr<PipelinedConnections> Context::open_pipelined_to(
    const std::vector<std::string>& addresses, ScriptCalls calls) const {
  std::vector<ConnectOptions> each;
  each.reserve(addresses.size());
  for (const std::string& address : addresses) {
    ConnectOptions options = connect_options(options_);
    // "host:port" as the slot map names a node (the host may hold colons: IPv6).
    const std::size_t colon = address.rfind(':');
    const std::optional<std::int64_t> port =
        colon == std::string::npos ? std::nullopt : parse_stored_value(address.substr(colon + 1));
    if (!port || *port <= 0 || *port > 65535) {
      throw ConnectionError(fmt::format("cannot read node address {}", address));
    }
    options.url.kind = RedisUrl::Kind::tcp;
    options.url.host = address.substr(0, colon);
    options.url.port = static_cast<int>(*port);
    each.push_back(std::move(options));
  }
  return std::make_unique<PipelinedConnections>(each, calls);
}

Client& Context::redis() {
  if (!client_) {
    ConnectOptions options = connect_options(options_);
    try {
      client_ = open_client(topology_of(options_), options, client_options(options_, writes_));
    } catch (const AuthenticationError& e) {
      AuthenticationError refused(
          fmt::format("{}; {}", e.what(), password_sources(options_, options)));
      print_unconnected(refused.what());
      throw refused;
    } catch (const ConnectionError& e) {
      print_unconnected(e.what());
      throw;
    } catch (const TlsError& e) {  // a refused handshake: no connection either
      print_unconnected(e.what());
      throw;
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
  } catch (const TlsError& e) {  // a refused handshake: no connection either
    connect_error_ = e.what();
  }
  print_error(connect_error_);
  return nullptr;
}

void Context::on_unconnected(std::function<void(const std::string& reason)> lines) {
  unconnected_lines_ = std::move(lines);
}

void Context::on_unconnected(std::vector<ItemResult> items, bool writes) {
  on_unconnected([this, items = std::move(items), writes](const std::string& reason) mutable {
    ExitFold unused;  // the connection error that ends the run decides the exit status
    ItemErrorEcho invalid;
    for (ItemResult& item : items) {
      if (item.status == Status::invalid) {
        invalid.add(item.sku, item.error);
      } else {
        if (writes) {
          set_not_applied(item, reason);
        } else {
          set_error(item, Status::error, reason);
        }
      }
      emit(item, unused);
    }
  });
}

void Context::print_unconnected(const std::string& reason) {
  // Once: a command that tries again prints its lines the first time only.
  std::function<void(const std::string&)> lines = std::move(unconnected_lines_);
  unconnected_lines_ = nullptr;
  if (!lines) return;
  lines(reason);
  out_.flush();
}

void Context::emit(const ItemResult& item, ExitFold& fold) {
  out_.write(item);
  stats_.add(item.status);
  fold.add(item.status);
}

}  // namespace stockctl
