#include "redis/client.h"

#include "redis/errors.h"

namespace stockctl {

Reply Client::call(const Call& call) {
  std::vector<CallResult> results = run({call});
  if (results[0].state != CallResult::State::replied) throw ConnectionError(results[0].error);
  return std::move(results[0].reply);
}

}  // namespace stockctl
