#include "commands/context.h"

#include <iostream>

#include "redis/standalone_client.h"

namespace stockctl {

Context::Context(const CommonOptions& options)
    : options_(options), scheme_(key_scheme(options)), out_(std::cout, options.pretty) {}

Client& Context::redis() {
  if (!client_) client_ = std::make_unique<StandaloneClient>(connect_options(options_));
  return *client_;
}

void Context::emit(const ItemResult& item, ExitFold& fold) {
  out_.write(item_json(item));
  fold.add(item.status);
}

}  // namespace stockctl
