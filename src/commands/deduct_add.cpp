#include "commands/deduct_add.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <optional>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "bulk/validated_rows.h"
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
  if (needs_error_line(item.status)) echo.add(item.sku, item.error);
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
  } else if (o.op.request_id_given && !validate_request_id(o.op.request_id).empty()) {
    // An empty id (an unset $ORDER_ID) is refused: taken as "no id", every retry would apply.
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
        return interpret_op_row(record, columns, scheme, row);
      },
      nullptr};
}

// An invalid row was told on stderr when the source was validated: its line here is data only,
// so that each problem is printed once.
void emit_window(Context& ctx, const std::vector<ItemResult>& window, ExitFold& fold,
                 ItemErrorEcho& echo) {
  for (const ItemResult& item : window) {
    // A row refused by validation (never sent: it has no qty) was reported on standard error
    // then; it only gets its line on standard output here.
    if (!item.qty) {
      ctx.emit(item, fold);
    } else {
      emit_checked(ctx, item, fold, echo);
    }
  }
  ctx.out().flush();
}

// Reports rows that will not be sent (no connection, or the run was interrupted) as not
// applied. Their reason was said once on standard error, so they are not echoed one by one.
void emit_unsent(Context& ctx, std::vector<ItemResult>& window, const std::string& why,
                 ExitFold& fold, ItemErrorEcho& echo) {
  for (ItemResult& item : window) {
    if (!item.qty) {
      emit_checked(ctx, item, fold, echo);  // invalid, reported as such
      continue;
    }
    set_not_applied(item, why);
    ctx.emit(item, fold);
  }
  ctx.out().flush();
}

ExitCode run_batch(Context& ctx, OpRunner::Op op, const std::string& name,
                   const OpCommandOptions& o) {
  if (!o.sku.empty() || !o.qty.empty())
    throw InputError(fmt::format("{}: give SKU QTY or --file, not both", name));
  if (o.op.request_id_given) {
    throw InputError(
        fmt::format("{}: --request-id is for one item; with --file, each row's id comes from its "
                    "'{}' column",
                    name, o.source.columns.request_id));
  }
  Source source(o.source.file,
                o.source.format.empty() ? std::nullopt : parse_format(o.source.format));
  RowReader<OpRow> reader = op_reader(o.source.columns, ctx.scheme());
  Validation validation = validate_source(source, reader, o.source.skip_invalid);
  ExitFold fold;
  std::vector<ItemResult> window;
  // Connect only now that the whole source is known to be valid.
  Client* client = ctx.redis_or_null();
  std::optional<OpRunner> runner;
  if (client) runner.emplace(*client, op, o.op, ctx.scheme());
  if (runner) runner->set_change_log(ctx.change_log());
  // Why rows are no longer sent: no connection could be made, or a signal asked us to stop.
  std::string stopped = client ? "" : ctx.connect_error();
  std::size_t unsent = 0;
  Progress progress(name, validation.rows);
  ItemErrorEcho echo;
  // Two windows in flight: the server works on one while the next is read from the file.
  std::deque<std::vector<ItemResult>> sent;
  auto complete_oldest = [&] {
    runner->finish(sent.front());
    emit_window(ctx, sent.front(), fold, echo);
    sent.pop_front();
  };
  auto submit = [&] {
    progress.advance(window.size());
    if (stopped.empty() && interrupted()) stopped = interrupt_reason();
    if (!stopped.empty()) {
      // What is on the wire is settled and reported first: output keeps input order.
      while (!sent.empty()) complete_oldest();
      unsent += static_cast<std::size_t>(std::count_if(
          window.begin(), window.end(), [](const ItemResult& i) { return i.qty.has_value(); }));
      emit_unsent(ctx, window, stopped, fold, echo);
    } else {
      runner->start(window);
      sent.push_back(std::move(window));
      if (sent.size() > 1) complete_oldest();
    }
    window = {};
    window.reserve(kWindow);
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
  if (interrupted()) {
    print_error(fmt::format("{}: {} rows were not sent (reported as not applied)",
                            interrupt_reason(), unsent));
  }
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
