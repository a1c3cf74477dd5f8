#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "base/interrupt.h"
#include "bulk/validated_rows.h"
#include "bulk/windows_in_flight.h"
#include "core/outcome.h"
#include "output/progress.h"

namespace stockctl {

/// The write pass every bulk command runs (deduct and add --file, init and rebuild --file or
/// --from-cmd), after validate_source() has found the whole source valid:
///
///   for each window of rows read from the source:
///     if rows can no longer be sent: settle what is in flight, report the window not applied
///     else: submit the window to the runner, emit every window the runner has finished
///   settle what is in flight
///
/// Output keeps input order. `Job` holds what differs between the commands:
///   using Row, Runner (Runner::Item is the item type; see WindowsInFlight for the runner);
///   Item item_for(const Row&, const std::string& problem): the row's item ("" = valid row);
///   static ItemResult& result(Item&), static bool pending(const Item&): the item's result,
///     and whether it is to be sent;
///   void emit(std::vector<Item>& window, bool sent): reports a finished or an unsent window;
///   void before_window(): runs before each window is sent; throws StockctlError to end the run
///     (rebuild: its run lock was lost).
template <class Job>
class BulkPass {
 public:
  using Row = typename Job::Row;
  using Runner = typename Job::Runner;
  using Window = std::vector<typename Runner::Item>;

  /// `runner` is null when no connection could be made; `stopped` says why. `window_rows`:
  /// the rows of a window (window_rows() of validated_rows.h).
  BulkPass(Job& job, Runner* runner, std::string stopped, std::size_t window_rows = kWindow)
      : job_(job), stopped_(std::move(stopped)), window_rows_(window_rows) {
    if (runner) in_flight_.emplace(*runner);
  }

  /// Runs the pass over the source `validation` was made from; returns how many valid rows were
  /// not sent. Throws what before_window() throws, once what is in flight is settled and
  /// emitted.
  std::size_t run(Source& source, const RowReader<Row>& reader, const Validation& validation,
                  Progress& progress) {
    for_each_window(
        source, reader, validation,
        [this](const Row& row, const std::string& problem) { return job_.item_for(row, problem); },
        [&](Window window) {
          progress.advance(window.size());
          take(std::move(window));
        },
        window_rows_);
    settle();
    return unsent_;
  }

 private:
  void take(Window window) {
    if (stopped_.empty() && interrupted()) stopped_ = interrupt_reason();
    if (stopped_.empty()) prepare_window();
    if (!stopped_.empty()) return report_unsent(window);
    in_flight_->submit(std::move(window));
    emit_completed();
  }

  void prepare_window() {
    try {
      job_.before_window();
    } catch (const StockctlError&) {
      settle();  // the windows already sent are reported before the run ends
      throw;
    }
  }

  // What is on the wire is settled and reported first, so that output keeps input order.
  void report_unsent(Window& window) {
    settle();
    for (auto& item : window) {
      if (!Job::pending(item)) continue;
      set_not_applied(Job::result(item), stopped_);
      ++unsent_;
    }
    job_.emit(window, false);
  }

  void settle() {
    if (!in_flight_) return;
    in_flight_->drain();
    emit_completed();
  }

  void emit_completed() {
    for (Window& done : in_flight_->completed()) job_.emit(done, true);
  }

  Job& job_;
  std::optional<WindowsInFlight<Runner>> in_flight_;
  std::string stopped_;  ///< why rows are no longer sent: no connection, or a signal
  std::size_t window_rows_;
  std::size_t unsent_ = 0;
};

}  // namespace stockctl
