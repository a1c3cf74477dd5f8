#include "commands/stock_file.h"

#include <chrono>

#include "cli/diagnostics.h"
#include "cli/errors.h"
#include "commands/batch.h"
#include "commands/put_runner.h"
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

}  // namespace

ExitCode run_stock_file(Context& ctx, const StockFileRun& run,
                        const std::function<void()>& each_window) {
  const auto started = std::chrono::steady_clock::now();
  Source source(run.source.file,
                run.source.format.empty() ? std::nullopt : parse_format(run.source.format));
  RowReader<StockRow> reader = stock_reader(run.source.columns, ctx.scheme());
  Validation validation = validate_source(source, reader, run.source.skip_invalid);
  FileRunLog log(run.source.report, run.fail_on_drift);
  PutRunner runner(ctx.redis(), run.mode, run.ttl_s, run.lock);
  runner.set_change_log(ctx.change_log(), run.op);
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
    if (each_window) {
      try {
        each_window();
      } catch (...) {
        runner.finish(written);  // what is already on the wire is still counted
        throw;
      }
    }
    runner.submit(std::move(window), written);
    window = {};
    window.reserve(kWindow);
  };
  for_each_row<StockRow>(source, reader, validation,
                         [&](const StockRow& row, const std::string& problem) {
                           window.push_back(put_item(run, ctx.scheme(), source, row, problem));
                           if (window.size() >= kWindow) submit();
                         });
  if (!window.empty()) submit();
  runner.finish(written);
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
  summary.rows = log.rows();
  summary.counts = log.counts();
  summary.dry_run = run.mode.dry_run;
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
