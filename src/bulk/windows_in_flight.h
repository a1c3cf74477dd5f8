#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "redis/started_windows.h"

namespace stockctl {

/// The windows a bulk pass has started and not yet finished, oldest first: the one place that
/// decides how many windows are in flight. After each submit() the newest window stays on the
/// server while the caller reads the source for the next one.
///
/// `Runner` has `using Item`, `start(std::vector<Item>&)`, which sends a window, and
/// `finish(std::vector<Item>&)`, which reads its replies and decides its items; windows are
/// finished in the order they were started. A started window stays in place (its items'
/// addresses do not change) until it is finished.
template <class Runner>
class WindowsInFlight {
 public:
  using Window = std::vector<typename Runner::Item>;

  explicit WindowsInFlight(Runner& runner) : runner_(runner) {}

  /// Starts `window`, then finishes every older one but the newest.
  void submit(Window window) {
    Started& added = started_.open();
    added.items = std::move(window);
    runner_.start(added.items);
    while (started_.size() > kKeptStarted) finish_oldest();
  }

  /// Finishes every started window.
  void drain() {
    while (!started_.empty()) finish_oldest();
  }

  /// The windows finished since the last call, in the order they were submitted.
  std::vector<Window> completed() { return std::exchange(finished_, {}); }

 private:
  // One window left on the server while the next is read and sent: the server always has work,
  // and a deeper queue would only hold more items in memory.
  static constexpr std::size_t kKeptStarted = 1;

  void finish_oldest() {
    runner_.finish(started_.oldest().items);
    finished_.push_back(started_.take_oldest().items);
  }

  struct Started {
    std::uint64_t id = 0;
    Window items;
  };

  Runner& runner_;
  StartedWindows<Started> started_;
  std::vector<Window> finished_;
};

}  // namespace stockctl
