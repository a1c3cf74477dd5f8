#include "bulk/stock_file_run.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "bulk/bulk_pass.h"
#include "bulk/item_scan.h"
#include "bulk/split_runner.h"
#include "bulk/store_runner.h"
#include "output/json_writer.h"
#include "output/progress.h"

namespace stockctl {
namespace {

// `expires`: the run gives the keys it writes an expiry (--ttl), which a split item cannot have
// (its buckets never expire): a row that would split its item is invalid, found when the whole
// source is checked, before anything is written.
RowReader<StockRow> stock_reader(const SourceColumns& columns, const KeyScheme& scheme,
                                 bool expires) {
  return RowReader<StockRow>{
      stock_columns(columns, true),
      [&columns](const std::vector<bool>& present) { return check_stock_header(present, columns); },
      [&columns, &scheme, expires](const Record& record, StockRow& row) {
        std::string problem = interpret_stock_row(record, columns, scheme, row);
        if (problem.empty() && expires && row.buckets > 1) {
          problem = fmt::format(
              "column 'buckets': {} buckets with --ttl: a split item cannot expire (leave out "
              "--ttl, or the buckets)",
              row.buckets);
        }
        return problem;
      },
      [](const StockRow& row) -> const std::string& { return row.sku; }};
}

std::unique_ptr<Source> open_source(const SourceOptions& options) {
  std::optional<Format> format =
      options.format.empty() ? std::nullopt : parse_format(options.format);
  const char delimiter = options.columns.delimiter;
  if (options.from_cmd.empty()) return std::make_unique<Source>(options.file, format, delimiter);
  return std::make_unique<Source>(
      SourceCommand{options.from_cmd, std::chrono::milliseconds(options.from_cmd_timeout_ms)},
      format, delimiter);
}

// Records the items of a file run: counts them in the run's statistics (the summary's
// counts), folds them into the exit status, and writes the optional --report file.
class FileRunLog {
 public:
  FileRunLog(Context& ctx, const std::string& report_path, bool fail_on_drift) : ctx_(ctx) {
    if (!report_path.empty()) report_ = std::make_unique<ReportFile>(report_path);
    fold_.set_fail_on_drift(fail_on_drift);
  }
  // An error is echoed on standard error unless `echo` is false (rows not sent, whose one
  // reason was said once).
  void add(const ItemResult& item, bool echo) {
    ctx_.count(item);
    fold_.add(item.status);
    if (report_) report_->write(item);
    if (!item.note.empty()) ++maybe_own_;
    // Enough to see what is wrong without flooding a terminal when a server goes away mid-run.
    if (echo && item.status == Status::error) errors_.add(item.sku, item.error);
    name_finding(item);
  }
  // Says how many items may have been found as this run's own write; commits the report.
  // Throws IoError.
  void finish() {
    if (maybe_own_ > 0) {
      // The summary counts them as exists (or drift): without this line an operator would take
      // them all for stale keys that were kept.
      print_warning(
          fmt::format("{} items were found on a retry after a try whose outcome was "
                      "unknown: each key may be this run's own write (see \"note\" "
                      "in --report)",
                      maybe_own_));
    }
    for (const auto& [status, seen] : findings_) {
      if (seen > kNamedFindings) {
        print_warning(more_findings_line(status, seen - kNamedFindings, report_ != nullptr));
      }
    }
    if (report_) report_->commit();
  }
  ExitFold& fold() { return fold_; }

 private:
  // A few drifting and extra items by name, so that an operator sees which without opening the
  // report; the report has them all.
  static constexpr std::size_t kNamedFindings = 10;
  void name_finding(const ItemResult& item) {
    if (item.status != Status::drift && item.status != Status::extra) return;
    if (++findings_[item.status] <= kNamedFindings) print_warning(finding_line(item));
  }

  Context& ctx_;
  std::unique_ptr<ReportFile> report_;
  std::size_t maybe_own_ = 0;               ///< items with the note kMaybeOwnWrite
  std::map<Status, std::size_t> findings_;  ///< drift and extra items seen
  ItemErrorEcho errors_;
  ExitFold fold_;
};

// What init and rebuild plug into the bulk pass: a row becomes a PutItem, and each finished
// window is counted and recorded (the run prints one summary, not a line per row).
class StockJob {
 public:
  using Row = StockRow;
  using Runner = PutRunner;

  StockJob(const StockFileOptions& options, const KeyScheme& scheme, const Source& source,
           FileRunLog& log, const std::function<void()>& before_window)
      : options_(options),
        scheme_(scheme),
        source_(source),
        log_(log),
        before_window_(before_window) {}

  PutItem item_for(const StockRow& row, const std::string& problem) const {
    PutItem item;
    item.result.op = options_.op;
    item.result.sku = row.sku;
    if (row.sku_valid) item.result.key = stock_key(scheme_, row.sku);
    item.value = row.value;
    item.counts_held = row.counts_held;
    item.buckets = row.buckets;
    if (!problem.empty()) {
      item.pending = false;
      set_error(item.result, Status::invalid,
                fmt::format("{}:{}: {}", source_.name(), row.line, problem));
    }
    return item;
  }
  static ItemResult& result(PutItem& item) { return item.result; }
  static bool pending(const PutItem& item) { return item.pending; }

  void emit(const std::vector<PutItem>& window, bool sent) {
    for (const PutItem& item : window) log_.add(item.result, sent || !item.pending);
  }

  void before_window() const {
    if (before_window_) before_window_();
  }

 private:
  const StockFileOptions& options_;
  const KeyScheme& scheme_;
  const Source& source_;
  FileRunLog& log_;
  const std::function<void()>& before_window_;
};

// Every item Redis holds whose SKU has no valid row in the source, found by its hash among the
// rows' hashes (no second copy of the SKUs is kept), with its current value, recorded in `log`.
// Returns how many were found.
std::size_t report_extra_items(Context& ctx, const std::vector<std::uint64_t>& row_hashes,
                               FileRunLog& log) {
  std::size_t reported = 0;
  scan_items(ctx, "*", 1000, [&](std::vector<ScannedItem>& batch) {
    std::vector<ItemResult> extra;
    std::vector<Call> reads;
    for (ScannedItem& found : batch) {
      if (std::binary_search(row_hashes.begin(), row_hashes.end(), sku_hash(found.sku))) continue;
      ItemResult& item = extra.emplace_back();
      item.op = "rebuild";
      item.sku = std::move(found.sku);
      item.key = std::move(found.key);
      reads.push_back(Call::read({"GET", item.key}));
    }
    if (extra.empty()) return;
    std::vector<CallResult> values = ctx.redis().run(reads);
    for (std::size_t i = 0; i < extra.size(); ++i) {
      ItemResult& r = extra[i];
      if (values[i].state == CallResult::State::replied && !values[i].reply.is_error()) {
        const std::optional<std::string> value = values[i].reply.string_or_nil();
        apply_stored_value(r, value);
        // A split item: its total and bucket count, as get reads them.
        if (value && is_split_record(*value)) read_split_item(ctx.redis(), r, *value, {});
      }
      r.status = Status::extra;
      r.error.clear();
      log.add(r, true);
    }
    reported += extra.size();
  });
  return reported;
}

}  // namespace

bool has_source(const SourceOptions& o) {
  if (!o.file.empty() && !o.from_cmd.empty()) {
    throw InputError("give --file or --from-cmd, not both");
  }
  return !o.file.empty() || !o.from_cmd.empty();
}

StockFileRun::StockFileRun(Context& ctx, StockFileOptions options)
    : ctx_(ctx),
      options_(std::move(options)),
      started_(std::chrono::steady_clock::now()),
      reader_(stock_reader(options_.source.columns, ctx.scheme(), options_.ttl_s > 0)) {}

StockFileRun::~StockFileRun() = default;

std::size_t StockFileRun::validate() {
  try {
    // Opened here, not when the run is made: a file that cannot be opened, or a command that
    // cannot be started, ends the run with its summary too.
    source_ = open_source(options_.source);
    validation_ = check_source(*source_, reader_, options_.source.skip_invalid, options_.extra);
  } catch (const InputError& e) {
    // A source that cannot be read as rows at all still ends with its summary, and its
    // --report replaced: an earlier run's must not be read as this one's. One that broke
    // partway counts the rows read before (their invalid ones were printed).
    if (const auto* broken = dynamic_cast<const BrokenSource*>(&e)) {
      validation_.rows = broken->rows();
      for (std::size_t i = 0; i < broken->invalid(); ++i) ctx_.count(Status::invalid);
    }
    print_refusal(e.what());
    replace_report_unread();
    throw;
  } catch (const StockctlError& e) {
    // Interrupted, or --from-cmd failed: the same, with what happened.
    print_refusal(e.what(), dynamic_cast<const InterruptedError*>(&e) ? "interrupted" : "error");
    replace_report_unread();
    throw;
  }
  if (!validation_.refusal.empty()) {
    if (options_.source.report.empty()) {
      // Validation counted them: only a report needs the source read again.
      for (std::size_t i = 0; i < validation_.invalid; ++i) ctx_.count(Status::invalid);
    } else {
      report_invalid_rows();
    }
    print_refusal(validation_.refusal);
    throw InputError(validation_.refusal);
  }
  return validation_.rows;
}

void StockFileRun::report_rows(
    const std::function<std::optional<ItemResult>(const PutItem&)>& line_of) {
  FileRunLog log(ctx_, options_.source.report, false);
  const std::function<void()> no_window_step;
  StockJob job(options_, ctx_.scheme(), *source_, log, no_window_step);
  for_each_window(
      *source_, reader_, validation_,
      [&job](const StockRow& row, const std::string& problem) {
        return job.item_for(row, problem);
      },
      [&log, &line_of](const std::vector<PutItem>& window) {
        for (const PutItem& item : window) {
          if (std::optional<ItemResult> line = line_of(item)) log.add(*line, false);
        }
      });
  log.finish();
}

void StockFileRun::report_invalid_rows() {
  report_rows([](const PutItem& item) -> std::optional<ItemResult> {
    if (item.result.status != Status::invalid) return std::nullopt;
    return item.result;
  });
}

void StockFileRun::replace_report_unread() {
  if (options_.source.report.empty()) return;
  try {
    FileRunLog(ctx_, options_.source.report, false).finish();
  } catch (const IoError& e) {
    print_error(e.what());
  }
}

void StockFileRun::print_refusal(const std::string& why, const std::string& status) {
  Summary refused = summary();
  refused.rows = validation_.rows;
  refused.status = status;
  refused.error = why;
  ctx_.out().write_summary(summary_json(refused));
}

ExitCode StockFileRun::write(const std::function<void()>& before_window) {
  FileRunLog log(ctx_, options_.source.report, options_.fail_on_drift);
  // Connects only now that the whole source is known to be valid.
  Client* client = ctx_.redis_or_null();
  std::optional<PutRunner> runner;
  if (client) {
    runner.emplace(*client, options_.mode, options_.ttl_s, options_.lock);
    runner->set_change_log(ctx_.change_log(), options_.op);
    runner->set_key_scheme(ctx_.scheme());
  }
  StockJob job(options_, ctx_.scheme(), *source_, log, before_window);
  Progress progress(options_.op, validation_.rows);
  BulkPass<StockJob> pass(job, runner ? &*runner : nullptr, client ? "" : ctx_.connect_error(),
                          window_rows(client && client->waits_for_replicas()));
  const std::size_t unsent = pass.run(*source_, reader_, validation_, progress);
  // Extra items are findings, not rows of the source.
  const std::size_t extra = options_.extra && runner && !interrupted()
                                ? report_extra_items(ctx_, validation_.sku_hashes, log)
                                : 0;
  // The writes to Redis are done whatever happens to the report: say what was done, then fail.
  std::string report_error;
  try {
    log.finish();
  } catch (const IoError& e) {
    report_error = e.what();
  }
  Summary done = summary();
  done.rows -= extra;
  if (!client) {
    done.status = "error";
    done.error = ctx_.connect_error();
  } else if (interrupted()) {
    done.status = "interrupted";
    done.error = fmt::format("{}: {} rows were not sent (reported as not applied)",
                             interrupt_reason(), unsent);
    print_error(done.error);
  }
  ctx_.out().write_summary(summary_json(done));
  if (!report_error.empty()) {
    print_error(report_error);
    log.fold().add(ExitCode::failure);
  }
  return log.fold().code();
}

ExitCode StockFileRun::busy(const std::string& why) {
  return end_unwritten("busy", why, ExitCode::busy);
}

ExitCode StockFileRun::failed(const std::string& why) {
  return end_unwritten("error", why, ExitCode::failure);
}

ExitCode StockFileRun::end_unwritten(const std::string& status, const std::string& why,
                                     ExitCode code) {
  print_error(why);
  // Every row is accounted for, and --report replaced: a cron job reading the report of an
  // earlier run as this one's would take stale findings for current ones.
  std::string report_error;
  try {
    report_unwritten_rows(status == "busy" ? Status::busy : Status::error, why);
  } catch (const IoError& e) {
    report_error = e.what();
  }
  Summary ended = summary();
  ended.rows = validation_.rows;
  ended.status = status;
  ended.error = why;
  ctx_.out().write_summary(summary_json(ended));
  if (report_error.empty()) return code;
  print_error(report_error);
  return ExitCode::failure;  // as a run whose report failed: the report is what was asked for
}

void StockFileRun::report_unwritten_rows(Status status, const std::string& why) {
  report_rows([status, &why](const PutItem& item) -> std::optional<ItemResult> {
    ItemResult line = item.result;
    if (line.status != Status::invalid) set_error(line, status, "not applied: " + why);
    return line;
  });
}

Summary StockFileRun::summary() const {
  Summary s;
  s.op = options_.op;
  s.source = source_ ? source_->name()
             : !options_.source.file.empty()
                 ? (options_.source.file == "-" ? "<stdin>" : options_.source.file)
                 : "<from-cmd>";
  s.rows = ctx_.stats().items;
  s.counts = ctx_.stats().counts;
  s.dry_run = options_.mode.dry_run;
  s.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - started_)
                     .count();
  return s;
}

}  // namespace stockctl
