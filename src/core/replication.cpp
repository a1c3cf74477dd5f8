#include "core/replication.h"

namespace stockctl {

int replicas_to_wait_for(int asked, int attached) {
  if (asked != kWaitReplicasAuto) return asked;
  return attached > 0 ? 1 : 0;
}

bool warn_unreplicated(int asked, int attached, bool replicas_expected) {
  return asked == kWaitReplicasAuto && attached == 0 && replicas_expected;
}

std::optional<std::string> sentinels_master(const std::vector<SentinelAnswer>& answers) {
  const SentinelAnswer* best = nullptr;
  for (const SentinelAnswer& a : answers) {
    if (!best || a.config_epoch > best->config_epoch) best = &a;
  }
  if (!best) return std::nullopt;
  return best->address;
}

}  // namespace stockctl
