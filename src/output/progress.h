#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

namespace stockctl {

/// The progress line: "LABEL: DONE/TOTAL rows (P%), R rows/s, Ns left", or without total,
/// percentage and estimate when the total is unknown (0).
std::string progress_line(const std::string& label, std::size_t done, std::size_t total,
                          double elapsed_seconds);

/// The progress line of bench: "bench: DONE/TOTAL requests (P%), R requests/s", or with a
/// duration instead of a count "bench: S/D s (P%), DONE requests, R requests/s"
/// (`duration_seconds` > 0). The percentage never passes 100.
std::string bench_progress_line(long long done, long long total, double elapsed_seconds,
                                double duration_seconds);

/// One line on standard error redrawn in place — only when standard error is a terminal and
/// --quiet is not given, so cron and pipes see nothing — and cleared by clear() or at the end
/// of its life.
class StatusLine {
 public:
  StatusLine();
  ~StatusLine() { clear(); }
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  /// Whether a redraw is due: the line is shown and 200 ms passed since the last one.
  bool due();
  /// Draws `text` now (when the line is shown).
  void draw(const std::string& text);
  /// Removes the line, so that what follows starts on a clean line.
  void clear();

 private:
  using clock = std::chrono::steady_clock;
  bool enabled_;
  bool drawn_ = false;
  clock::time_point next_draw_;
};

/// The progress line of bench: the requests answered so far, counted by every worker thread and
/// drawn by one of them.
class RequestProgress {
 public:
  /// `duration_seconds` > 0: a run for that long, else one of `total_requests`.
  RequestProgress(long long total_requests, double duration_seconds);

  /// Counts one answer; the drawer redraws the line when a redraw is due.
  void answered(bool drawer);
  /// Draws the final figures (100 % unless the run was cut short), then clears the line so
  /// that what is printed next starts on a clean one.
  void finish();

 private:
  std::string text() const;

  long long total_;
  double duration_s_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::atomic<long long> done_{0};
  StatusLine line_;
};

/// Shows progress of long work on standard error, redrawn in place at most five times a
/// second — only when standard error is a terminal and --quiet is not given, so cron and pipes
/// see nothing. The line is cleared when the work ends.
class Progress {
 public:
  Progress(std::string label, std::size_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::size_t rows);

 private:
  using clock = std::chrono::steady_clock;
  std::string label_;
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
  bool drawn_ = false;
  clock::time_point started_ = clock::now();
  clock::time_point next_draw_;
};

}  // namespace stockctl
