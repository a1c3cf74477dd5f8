#pragma once

#include <memory>

#include "redis/client.h"
#include "redis/connection.h"

namespace stockctl {

/// A Client over one standalone server. Connects in the constructor (throws ConnectionError);
/// after the connection breaks, the next run() reconnects once before giving up.
class StandaloneClient : public Client {
 public:
  StandaloneClient(ConnectOptions options, ClientOptions client_options);

 protected:
  std::vector<CallResult> send(const std::vector<Call>& calls) override;

 private:
  std::vector<CallResult> send_raw(const std::vector<Call>& calls);
  void reload_missing_scripts(const std::vector<Call>& calls, std::vector<CallResult>& results);

  ConnectOptions options_;
  std::unique_ptr<Connection> conn_;
};

}  // namespace stockctl
