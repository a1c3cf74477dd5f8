#include "bulk/stock_file_run.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "bulk/item_scan.h"
#include "bulk/store_runner.h"
#include "bulk/validated_rows.h"
#include "output/progress.h"

namespace stockctl {
namespace {

RowReader<StockRow> stock_reader(const SourceColumns& columns, const KeyScheme& scheme) {
  return RowReader<StockRow>{
      stock_columns(columns),
      [&columns](const std::vector<bool>& present) { return check_stock_header(present, columns); },
      [&columns, &scheme](const Record& record, StockRow& row) {
        return interpret_stock_row(record, columns, scheme, row);
      },
      [](const StockRow& row) -> const std::string& { return row.sku; }};
}

PutItem put_item(const StockFileRun& run, const KeyScheme& scheme, const Source& source,
                 const StockRow& row, const std::string& problem) {
  PutItem item;
  item.result.op = run.op;
  item.result.sku = row.sku;
  // A row without a problem has a valid SKU already.
  if (problem.empty() || validate_sku(row.sku, scheme).empty()) {
    item.result.key = stock_key(scheme, row.sku);
  }
  item.value = row.value;
  if (!problem.empty()) {
    item.pending = false;
    set_error(item.result, Status::invalid,
              fmt::format("{}:{}: {}", source.name(), row.line, problem));
  }
  return item;
}

std::unique_ptr<Source> open_source(const SourceOptions& options) {
  std::optional<Format> format =
      options.format.empty() ? std::nullopt : parse_format(options.format);
  if (options.from_cmd.empty()) return std::make_unique<Source>(options.file, format);
  return std::make_unique<Source>(
      SourceCommand{options.from_cmd, std::chrono::milliseconds(options.from_cmd_timeout_ms)},
      format);
}

// Every item Redis holds whose SKU has no valid row in the source, found by its hash among the
// rows' hashes (no second copy of the SKUs is kept), with its current value.
// Returns how many were reported.
std::size_t report_extra_items(Context& ctx, const std::vector<std::uint64_t>& row_hashes,
                               const PutRunner::Done& report) {
  std::size_t reported = 0;
  scan_items(ctx, "*", 1000, [&](std::vector<ScannedItem>& batch) {
    std::vector<PutItem> extra;
    std::vector<Call> reads;
    for (ScannedItem& found : batch) {
      if (std::binary_search(row_hashes.begin(), row_hashes.end(), sku_hash(found.sku))) continue;
      PutItem& item = extra.emplace_back();
      item.result.op = "rebuild";
      item.result.sku = std::move(found.sku);
      item.result.key = std::move(found.key);
      reads.push_back(Call::read({"GET", item.result.key}));
    }
    if (extra.empty()) return;
    std::vector<CallResult> values = ctx.redis().run(reads);
    for (std::size_t i = 0; i < extra.size(); ++i) {
      ItemResult& r = extra[i].result;
      if (values[i].state == CallResult::State::replied && !values[i].reply.is_error()) {
        apply_stored_value(r, values[i].reply.string_or_nil());
      }
      r.status = Status::extra;
      r.error.clear();
    }
    reported += extra.size();
    report(extra);
  });
  return reported;
}

}  // namespace

void add_from_cmd_options(CLI::App& app, SourceOptions& o) {
  app.add_option("--from-cmd", o.from_cmd,
                 "run CMD with sh -c and read its standard output as the source (instead of "
                 "--file; --format defaults to csv)")
      ->type_name("CMD")
      ->group("Source");
  app.add_option("--from-cmd-timeout", o.from_cmd_timeout_ms,
                 "stop --from-cmd and write nothing when it runs longer, in ms (default 600000)")
      ->type_name("MS")
      ->check(CLI::Range(1LL, 86400000LL).description(""))
      ->group("Source");
}

bool has_source(const SourceOptions& o) {
  if (!o.file.empty() && !o.from_cmd.empty()) {
    throw InputError("give --file or --from-cmd, not both");
  }
  return !o.file.empty() || !o.from_cmd.empty();
}

ExitCode run_stock_file(Context& ctx, const StockFileRun& run,
                        const std::function<void()>& each_window) {
  const auto started = std::chrono::steady_clock::now();
  std::unique_ptr<Source> opened = open_source(run.source);
  Source& source = *opened;
  RowReader<StockRow> reader = stock_reader(run.source.columns, ctx.scheme());
  Validation validation = validate_source(source, reader, run.source.skip_invalid, run.extra);
  FileRunLog log(run.source.report, run.fail_on_drift);
  Client* client = ctx.redis_or_null();
  std::optional<PutRunner> runner;
  if (client) runner.emplace(*client, run.mode, run.ttl_s, run.lock);
  if (runner) runner->set_change_log(ctx.change_log(), run.op);
  // Why rows are no longer sent: no connection could be made, or a signal asked us to stop.
  std::string stopped = client ? "" : ctx.connect_error();
  std::size_t unsent = 0;
  std::vector<PutItem> window;
  Progress progress(run.op, validation.rows);
  const PutRunner::Done written = [&](std::vector<PutItem>& items) {
    for (const PutItem& item : items) {
      log.add(item.result);
      ctx.count(item.result);
    }
  };
  auto submit = [&] {
    progress.advance(window.size());
    if (stopped.empty() && interrupted()) stopped = interrupt_reason();
    if (!stopped.empty()) {
      if (runner) runner->finish(written);  // what is on the wire is settled and counted first
      for (PutItem& item : window) {
        if (item.pending) {
          set_not_applied(item.result, stopped);
          ++unsent;
        }
        log.add(item.result, !item.pending);
        ctx.count(item.result);
      }
    } else {
      if (each_window) {
        try {
          each_window();
        } catch (...) {
          runner->finish(written);  // what is already on the wire is still counted
          throw;
        }
      }
      runner->submit(std::move(window), written);
    }
    window = {};
    window.reserve(kWindow);
  };
  for_each_row<StockRow>(source, reader, validation,
                         [&](const StockRow& row, const std::string& problem) {
                           window.push_back(put_item(run, ctx.scheme(), source, row, problem));
                           if (window.size() >= kWindow) submit();
                         });
  if (!window.empty()) submit();
  if (runner) runner->finish(written);
  // Extra items are findings, not rows of the source.
  const std::size_t extra = run.extra && runner && !interrupted()
                                ? report_extra_items(ctx, validation.sku_hashes, written)
                                : 0;
  // The writes to Redis are done whatever happens to the report: say what was done, then fail.
  std::string report_error;
  try {
    log.finish();
  } catch (const IoError& e) {
    report_error = e.what();
  }
  Summary summary;
  summary.op = run.op;
  summary.source = source.name();
  summary.rows = log.rows() - extra;
  summary.counts = log.counts();
  summary.dry_run = run.mode.dry_run;
  if (!client) {
    summary.status = "error";
    summary.error = ctx.connect_error();
  } else if (interrupted()) {
    summary.status = "interrupted";
    summary.error = fmt::format("{}: {} rows were not sent (reported as not applied)",
                                interrupt_reason(), unsent);
    print_error(summary.error);
  }
  summary.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - started)
                           .count();
  ctx.out().write(summary_json(summary));
  if (!report_error.empty()) {
    print_error(report_error);
    log.fold().add(ExitCode::failure);
  }
  return log.fold().code();
}

}  // namespace stockctl
