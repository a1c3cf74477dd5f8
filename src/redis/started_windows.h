#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <utility>

namespace stockctl {

/// The windows started and not yet handed back, oldest first: the one queue behind every
/// "windows in flight" in stockctl (the bulk pass's item windows, and the call windows of each
/// client). The oldest is finished first (take_oldest); a single attempt made while windows are
/// started goes behind them and is taken back as soon as it is answered (take_newest).
///
/// `Window` has a `std::uint64_t id` that open() sets, never reused; at(id) finds a window while
/// it is here (a cluster node's reply names its window by id). Windows stay in place until taken:
/// references to them, and to what they hold, stay valid.
template <class Window>
class StartedWindows {
 public:
  /// Adds a window behind every started one.
  Window& open() {
    Window& added = windows_.emplace_back();
    added.id = next_id_++;
    return added;
  }

  /// The window `id`; throws std::out_of_range when it was taken already.
  Window& at(std::uint64_t id) {
    // Ids grow by one per open(), so the window is usually at its distance from the oldest
    // (every reply of a cluster node is routed back this way: no search per reply).
    if (!windows_.empty() && id >= windows_.front().id) {
      const std::uint64_t offset = id - windows_.front().id;
      if (offset < windows_.size() && windows_[offset].id == id) return windows_[offset];
    }
    auto it = std::lower_bound(windows_.begin(), windows_.end(), id,
                               [](const Window& w, std::uint64_t wanted) { return w.id < wanted; });
    if (it == windows_.end() || it->id != id) throw std::out_of_range("no started window");
    return *it;
  }
  Window& oldest() { return windows_.front(); }
  Window& newest() { return windows_.back(); }
  bool empty() const { return windows_.empty(); }
  std::size_t size() const { return windows_.size(); }

  Window take_oldest() {
    Window taken = std::move(windows_.front());
    windows_.pop_front();
    return taken;
  }
  Window take_newest() {
    Window taken = std::move(windows_.back());
    windows_.pop_back();
    return taken;
  }

  auto begin() { return windows_.begin(); }
  auto end() { return windows_.end(); }

 private:
  std::deque<Window> windows_;
  std::uint64_t next_id_ = 0;
};

}  // namespace stockctl
