#include "core/replication.h"

#include <algorithm>
#include <cstdlib>

namespace stockctl {

int replicas_to_wait_for(int asked, int attached) {
  if (asked != kWaitReplicasAuto) return asked;
  return attached > 0 ? 1 : 0;
}

bool warn_unreplicated(int asked, int attached, bool replicas_expected) {
  return asked == kWaitReplicasAuto && attached == 0 && replicas_expected;
}

long long sentinel_config_epoch(const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
    if (fields[i] == "config-epoch") return std::atoll(fields[i + 1].c_str());
  }
  return 0;
}

int sentinel_live_replicas(const std::vector<std::vector<std::string>>& replicas) {
  int live = 0;
  for (const std::vector<std::string>& fields : replicas) {
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
      if (fields[i] != "flags") continue;
      const std::string flags = "," + fields[i + 1] + ",";
      if (flags.find(",s_down,") == std::string::npos &&
          flags.find(",o_down,") == std::string::npos &&
          flags.find(",disconnected,") == std::string::npos) {
        ++live;
      }
    }
  }
  return live;
}

std::optional<std::string> sentinels_master(const std::vector<SentinelAnswer>& answers) {
  std::vector<std::string> to_try = sentinels_masters_to_try(answers);
  if (to_try.empty()) return std::nullopt;
  return to_try.front();
}

std::vector<std::string> sentinels_masters_to_try(const std::vector<SentinelAnswer>& answers) {
  std::vector<std::string> out;
  if (answers.empty()) return out;
  const long long highest =
      std::max_element(answers.begin(), answers.end(), [](const auto& a, const auto& b) {
        return a.config_epoch < b.config_epoch;
      })->config_epoch;
  for (const SentinelAnswer& a : answers) {
    if (a.config_epoch == highest && std::find(out.begin(), out.end(), a.address) == out.end()) {
      out.push_back(a.address);
    }
  }
  return out;
}

}  // namespace stockctl
