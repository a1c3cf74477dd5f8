#include "commands/op_command.h"

#include <fmt/format.h>

#include <deque>

#include "cli/diagnostics.h"
#include "cli/errors.h"
#include "commands/batch.h"
#include "core/quantity.h"
#include "output/progress.h"

namespace stockctl {
namespace {

struct OpCommandOptions {
  OpOptions op;
  SourceOptions source;
  std::string sku;
  std::string qty;
};

ItemResult new_item(const std::string& name, const KeyScheme& scheme, const std::string& sku) {
  ItemResult item;
  item.op = name;
  item.sku = sku;
  item.has_qty = true;
  if (validate_sku(sku, scheme).empty()) item.key = stock_key(scheme, sku);
  return item;
}

void emit_checked(Context& ctx, const ItemResult& item, ExitFold& fold, ItemErrorEcho& echo) {
  if (item.status == Status::error || item.status == Status::invalid)
    echo.add(item.sku, item.error);
  ctx.emit(item, fold);
}

ExitCode run_single(Context& ctx, OpRunner::Op op, const std::string& name,
                    const OpCommandOptions& o) {
  if (o.sku.empty() && o.qty.empty()) {
    throw InputError(fmt::format("{} needs SKU and QTY, or --file FILE", name));
  }
  if (o.qty.empty()) throw InputError(fmt::format("{} {}: QTY is missing", name, o.sku));
  ItemResult item = new_item(name, ctx.scheme(), o.sku);
  item.request_id = o.op.request_id;
  ParsedNumber qty = parse_qty(o.qty);
  ExitFold fold;
  // Invalid input is reported before Redis is touched.
  if (std::string problem = validate_sku(item.sku, ctx.scheme()); !problem.empty()) {
    set_error(item, Status::invalid, problem);
  } else if (!o.op.request_id.empty() && !validate_request_id(o.op.request_id).empty()) {
    set_error(item, Status::invalid, validate_request_id(o.op.request_id));
  } else if (!qty.ok()) {
    set_error(item, Status::invalid, fmt::format("QTY {}", qty.error));
  } else {
    item.qty = qty.value;
    std::vector<ItemResult> items{item};
    OpRunner runner(ctx.redis(), op, o.op, ctx.scheme());
    runner.set_change_log(ctx.change_log());
    runner.set_change_log(ctx.change_log());
    runner.run(items);
    item = items[0];
  }
  ItemErrorEcho echo;
  emit_checked(ctx, item, fold, echo);
  return fold.code();
}

RowReader<OpRow> op_reader(const SourceColumns& columns, const KeyScheme& scheme) {
  return RowReader<OpRow>{
      op_columns(columns),
      [&columns](const std::vector<bool>& present) { return check_op_header(present, columns); },
      [&columns, &scheme](const Record& record, OpRow& row) {
        std::string problem = interpret_op_row(record, columns, scheme, row);
        if (problem.empty() && !row.request_id.empty()) {
          problem = validate_request_id(row.request_id);
          if (!problem.empty())
            problem = fmt::format("column '{}': {}", columns.request_id, problem);
        }
        return problem;
      },
      nullptr};
}

void emit_window(Context& ctx, const std::vector<ItemResult>& window, ExitFold& fold,
                 ItemErrorEcho& echo) {
  for (const ItemResult& item : window) emit_checked(ctx, item, fold, echo);
  ctx.out().flush();
}

ExitCode run_batch(Context& ctx, OpRunner::Op op, const std::string& name,
                   const OpCommandOptions& o) {
  if (!o.sku.empty() || !o.qty.empty())
    throw InputError(fmt::format("{}: give SKU QTY or --file, not both", name));
  Source source(o.source.file,
                o.source.format.empty() ? std::nullopt : parse_format(o.source.format));
  RowReader<OpRow> reader = op_reader(o.source.columns, ctx.scheme());
  Validation validation = validate_source(source, reader, o.source.skip_invalid);
  ExitFold fold;
  std::vector<ItemResult> window;
  // Connect only now that the whole source is known to be valid.
  OpRunner runner(ctx.redis(), op, o.op, ctx.scheme());
  runner.set_change_log(ctx.change_log());
  Progress progress(name, validation.rows);
  ItemErrorEcho echo;
  // Two windows in flight: the server works on one while the next is read from the file.
  std::deque<std::vector<ItemResult>> sent;
  auto complete_oldest = [&] {
    runner.finish(sent.front());
    emit_window(ctx, sent.front(), fold, echo);
    sent.pop_front();
  };
  auto submit = [&] {
    progress.advance(window.size());
    runner.start(window);
    sent.push_back(std::move(window));
    window = {};
    window.reserve(kWindow);
    if (sent.size() > 1) complete_oldest();
  };
  for_each_row<OpRow>(source, reader, validation,
                      [&](const OpRow& row, const std::string& problem) {
                        ItemResult item = new_item(name, ctx.scheme(), row.sku);
                        item.request_id = row.request_id;
                        if (problem.empty()) {
                          item.qty = row.qty;
                        } else {
                          set_error(item, Status::invalid,
                                    fmt::format("{}:{}: {}", source.name(), row.line, problem));
                        }
                        window.push_back(std::move(item));
                        if (window.size() >= kWindow) submit();
                      });
  if (!window.empty()) submit();
  while (!sent.empty()) complete_oldest();
  return fold.code();
}

ExitCode run_op_command(Program& program, OpCommandOptions& o, OpRunner::Op op,
                        const std::string& name) {
  validate_init_source(o.op.init);
  o.op.init.format = o.source.format;
  o.op.init.columns = o.source.columns;
  Context ctx(program);
  if (o.source.file.empty()) return run_single(ctx, op, name, o);
  return run_batch(ctx, op, name, o);
}

}  // namespace

void setup_op_command(CLI::App& app, Program& program, OpRunner::Op op, const std::string& name,
                      const std::string& description) {
  auto o = std::make_shared<OpCommandOptions>();
  CLI::App* sub = app.add_subcommand(name, description);
  sub->add_option("SKU", o->sku, "item id");
  sub->add_option("QTY", o->qty, "quantity, 1 to 9007199254740991");
  add_op_options(*sub, o->op);
  add_source_options(*sub, o->source, false, false);
  add_common_footer(*sub);
  sub->callback([&program, o, op, name] {
    program.run = [&program, o, op, name] { return run_op_command(program, *o, op, name); };
  });
}

}  // namespace stockctl
