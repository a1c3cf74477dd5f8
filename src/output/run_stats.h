#pragma once

#include <cstddef>
#include <map>

#include "core/outcome.h"

namespace stockctl {

/// What a run did: items per status. Feeds --metrics-file.
struct RunStats {
  std::map<Status, std::size_t> counts;
  std::size_t items = 0;

  void add(Status status) {
    ++counts[status];
    ++items;
  }
};

}  // namespace stockctl
