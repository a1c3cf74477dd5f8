#include "bulk/adjust_file_run.h"

#include <fmt/format.h>

#include <optional>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "bulk/bulk_pass.h"
#include "bulk/split_adjust.h"
#include "bulk/validated_rows.h"
#include "output/progress.h"

namespace stockctl {
namespace {

RowReader<OpRow> op_reader(const SourceColumns& columns, const KeyScheme& scheme) {
  return RowReader<OpRow>{
      op_columns(columns),
      [&columns](const std::vector<bool>& present) { return check_op_header(present, columns); },
      [&columns, &scheme](const Record& record, OpRow& row) {
        return interpret_op_row(record, columns, scheme, row);
      },
      nullptr};
}

// What deduct and add --file plug into the bulk pass: a row becomes an ItemResult, and each
// finished window is printed line by line.
class AdjustJob {
 public:
  using Row = OpRow;
  using Runner = OpRunner;

  AdjustJob(Context& ctx, const std::string& name, const Source& source)
      : ctx_(ctx), name_(name), source_(source) {}

  /// A row on a split item (the stock script refuses its layout record) is applied to its
  /// buckets, as `deduct SKU QTY` applies it, before its line is printed.
  void apply_split_items_with(OpRunner* runner, OpRunner::Op op, const OpOptions* options) {
    runner_ = runner;
    op_ = op;
    options_ = options;
  }

  ItemResult item_for(const OpRow& row, const std::string& problem) const {
    ItemResult item = adjust_item(name_, ctx_.scheme(), row.sku, row.sku_valid);
    item.request_id = row.request_id;
    if (problem.empty()) {
      item.qty = row.qty;
    } else {
      set_error(item, Status::invalid, fmt::format("{}:{}: {}", source_.name(), row.line, problem));
    }
    return item;
  }
  static ItemResult& result(ItemResult& item) { return item; }
  /// Only a valid row has a qty; the others are decided already.
  static bool pending(const ItemResult& item) { return item.qty.has_value(); }

  void emit(std::vector<ItemResult>& window, bool sent) {
    for (ItemResult& item : window) {
      if (sent && runner_ != nullptr && item.qty.has_value()) {
        apply_to_split_item(*ctx_.redis_or_null(), *runner_, op_, *options_, ctx_.change_log(),
                            item, &stuck_);
      }
      // An invalid row was told on standard error when the source was validated: here it only
      // gets its line on standard output. A row not sent was not applied for the one reason
      // said once on standard error.
      const bool told = sent ? !item.qty.has_value() : item.qty.has_value();
      if (told) {
        ctx_.emit(item, fold_);
      } else {
        emit_checked(ctx_, item, fold_, echo_);
      }
    }
    ctx_.out().flush();
  }

  static void before_window() {}

  ExitCode code() const { return fold_.code(); }

 private:
  Context& ctx_;
  const std::string& name_;
  const Source& source_;
  ExitFold fold_;
  ItemErrorEcho echo_;
  OpRunner* runner_ = nullptr;
  OpRunner::Op op_ = OpRunner::Op::deduct;
  const OpOptions* options_ = nullptr;
  StuckLayouts stuck_;  ///< split items this run waited for in vain: later rows do not wait
};

// A source with invalid rows writes nothing: each invalid row still gets its line on standard
// output (told on standard error when the source was validated), as --report holds them for
// init and rebuild.
void print_invalid_rows(Context& ctx, const std::string& name, Source& source,
                        const RowReader<OpRow>& reader, const Validation& validation) {
  AdjustJob job(ctx, name, source);
  for_each_window(
      source, reader, validation,
      [&job](const OpRow& row, const std::string& problem) { return job.item_for(row, problem); },
      [&ctx](const std::vector<ItemResult>& window) {
        ExitFold unused;  // the refusal decides the exit status
        for (const ItemResult& item : window) {
          if (item.status == Status::invalid) ctx.emit(item, unused);
        }
      });
  ctx.out().flush();
}

}  // namespace

ItemResult adjust_item(const std::string& name, const KeyScheme& scheme, const std::string& sku,
                       bool sku_valid) {
  ItemResult item;
  item.op = name;
  item.sku = sku;
  item.has_qty = true;
  if (sku_valid) item.key = stock_key(scheme, sku);
  return item;
}

void emit_checked(Context& ctx, const ItemResult& item, ExitFold& fold, ItemErrorEcho& echo) {
  if (needs_error_line(item.status)) echo.add(item.sku, item.error);
  ctx.emit(item, fold);
}

ExitCode run_adjust_file(Context& ctx, OpRunner::Op op, const std::string& name,
                         const OpOptions& options, const SourceOptions& source_options) {
  Source source(source_options.file,
                source_options.format.empty() ? std::nullopt : parse_format(source_options.format),
                source_options.columns.delimiter);
  RowReader<OpRow> reader = op_reader(source_options.columns, ctx.scheme());
  Validation validation = check_source(source, reader, source_options.skip_invalid);
  if (!validation.refusal.empty()) {
    print_invalid_rows(ctx, name, source, reader, validation);
    throw InputError(validation.refusal);
  }
  // Connect only now that the whole source is known to be valid.
  Client* client = ctx.redis_or_null();
  std::optional<OpRunner> runner;
  if (client) {
    runner.emplace(*client, op, options, ctx.scheme());
    runner->set_change_log(ctx.change_log());
  }
  AdjustJob job(ctx, name, source);
  if (runner) job.apply_split_items_with(&*runner, op, &options);
  Progress progress(name, validation.rows);
  BulkPass<AdjustJob> pass(job, runner ? &*runner : nullptr, client ? "" : ctx.connect_error(),
                           window_rows(client && client->waits_for_replicas()));
  const std::size_t unsent = pass.run(source, reader, validation, progress);
  if (interrupted()) {
    print_error(fmt::format("{}: {} rows were not sent (reported as not applied)",
                            interrupt_reason(), unsent));
  }
  return job.code();
}

}  // namespace stockctl
