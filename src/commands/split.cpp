// `split SKU... --buckets N` and `split --file F`: spread hot items' stock over buckets in
// different hash slots, or merge them back (docs/split.md; the engine is bulk/split_runner).

#include <fmt/format.h>

#include <map>

#include "app/context.h"
#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/text.h"
#include "bulk/split_runner.h"
#include "cli/common_options.h"
#include "commands/program.h"
#include "core/sku.h"
#include "core/split_layout.h"
#include "sources/open_source.h"
#include "sources/rows.h"

namespace stockctl {
namespace {

struct SplitOptions {
  std::vector<std::string> skus;
  std::string buckets;  ///< --buckets, checked by parse_bucket_count
  std::string file;
  std::string format;
  SourceColumns columns;
  std::string buckets_column = "buckets";
  long long request_ttl_s = 86400;  ///< the ledgers whose request ids move to the new layout
};

// One item to split, and how many buckets it is to have.
struct SplitRow {
  ItemResult item;
  int buckets = 0;
};

ItemResult split_item_result(const Context& ctx, std::string sku) {
  ItemResult item;
  item.op = "split";
  item.sku = std::move(sku);
  if (std::string problem = accept_sku(item.sku, ctx.scheme()); !problem.empty()) {
    set_error(item, Status::invalid, problem);
  } else {
    item.key = stock_key(ctx.scheme(), item.sku);
  }
  return item;
}

std::vector<SplitRow> rows_from_arguments(const Context& ctx, const SplitOptions& o) {
  if (o.buckets.empty()) throw InputError("split needs --buckets N (2 to 64; 1 merges)");
  int buckets = 0;
  if (std::string problem = parse_bucket_count(o.buckets, buckets); !problem.empty()) {
    throw InputError(problem);
  }
  std::vector<SplitRow> rows;
  rows.reserve(o.skus.size());
  for (const std::string& sku : o.skus) rows.push_back({split_item_result(ctx, sku), buckets});
  return rows;
}

// Every row of the file, read and checked whole before anything is split; an invalid row is
// told on standard error naming file and line.
std::vector<SplitRow> rows_from_file(const Context& ctx, const SplitOptions& o) {
  std::optional<Format> format =
      o.format.empty() ? format_from_extension(o.file) : parse_format(o.format);
  Source source(o.file, format ? format : std::optional<Format>(Format::csv), o.columns.delimiter);
  std::vector<SplitRow> rows;
  struct Seen {
    std::size_t row;
    std::size_t line;
  };
  std::map<std::string, Seen> seen;  // the first row of each SKU
  std::string fatal;
  RecordHandler handler{
      [&o](const std::vector<bool>& present) {
        if (!present[0]) return fmt::format("header has no '{}' column", o.columns.sku);
        if (!present[1]) return fmt::format("header has no '{}' column", o.buckets_column);
        return std::string();
      },
      [&](Record& record) {
        if (record.fatal) {
          fatal = fmt::format("{}:{}: {}", source.name(), record.line, record.error);
          return false;
        }
        std::string sku;
        std::string problem = record.error.empty()
                                  ? read_record_sku(record, o.columns.sku, ctx.scheme(), sku)
                                  : record.error;
        SplitRow row{split_item_result(ctx, sku), 0};
        const Field& buckets = record.fields.size() > 1 ? record.fields[1] : Field{};
        if (problem.empty()) {
          problem = parse_bucket_count(buckets.text, row.buckets, "column 'buckets'");
        }
        if (problem.empty()) {
          // Every row of an item named twice is invalid, the first included (as init's rule):
          // which count was meant is a guess.
          const auto [first, fresh] = seen.emplace(sku, Seen{rows.size(), record.line});
          if (!fresh) {
            problem = fmt::format("duplicate SKU {} (first on line {})", quote_value(sku),
                                  first->second.line);
            SplitRow& earlier = rows[first->second.row];
            if (earlier.item.status != Status::invalid) {
              const std::string why = fmt::format(
                  "{}:{}: duplicate SKU {} (again on line {}; every row of it is "
                  "left out)",
                  source.name(), first->second.line, quote_value(sku), record.line);
              print_error(why);
              set_error(earlier.item, Status::invalid, why);
            }
          }
        }
        if (!problem.empty()) {
          const std::string why = fmt::format("{}:{}: {}", source.name(), record.line, problem);
          print_error(why);
          set_error(row.item, Status::invalid, why);
        }
        rows.push_back(std::move(row));
        return true;
      }};
  source.read({o.columns.sku, o.buckets_column}, handler);
  if (!fatal.empty()) throw InputError(fatal);
  return rows;
}

ExitCode run_split(Program& program, const SplitOptions& o) {
  Context ctx(program);
  if (o.file.empty() == o.skus.empty()) {
    throw InputError("split needs SKU... --buckets N, or --file FILE (not both)");
  }
  if (!o.file.empty() && !o.buckets.empty()) {
    throw InputError("split: with --file each row's bucket count comes from its 'buckets' column");
  }
  std::vector<SplitRow> rows =
      o.file.empty() ? rows_from_arguments(ctx, o) : rows_from_file(ctx, o);
  ExitFold fold;
  bool invalid = false;
  for (const SplitRow& row : rows) invalid = invalid || row.item.status == Status::invalid;
  if (invalid) {
    // One invalid item and nothing is split: the list was not what the user meant.
    for (const SplitRow& row : rows) {
      if (row.item.status != Status::invalid) continue;
      if (o.file.empty()) print_error(fmt::format("item '{}': {}", row.item.sku, row.item.error));
      ctx.emit(row.item, fold);
    }
    return fold.code();
  }
  std::vector<ItemResult> items;
  items.reserve(rows.size());
  for (const SplitRow& row : rows) items.push_back(row.item);
  ctx.on_unconnected(items, true);
  SplitRunner runner(ctx.redis(), read_slot_ranges(ctx.redis(), program.common.cluster),
                     ctx.change_log(), o.request_ttl_s);
  ItemErrorEcho echo;
  for (SplitRow& row : rows) {
    runner.run(row.item, row.buckets);
    if (row.item.status == Status::error || row.item.status == Status::conflict) {
      echo.add(row.item.sku, row.item.error);
    }
    ctx.emit(row.item, fold);
  }
  return fold.code();
}

}  // namespace

void setup_split(CLI::App& app, Program& program) {
  auto o = std::make_shared<SplitOptions>();
  CLI::App* sub = app.add_subcommand(
      "split",
      "spread hot items' stock over N buckets in different hash slots (--buckets 1 merges "
      "them back); a crash leaves the old layout or the new one, and the same command finishes");
  sub->add_option("SKU", o->skus, "item ids");
  sub->add_option("--buckets", o->buckets, "how many buckets: 2 to 64; 1 merges into one key")
      ->type_name("N");
  sub->add_option("-f,--file", o->file,
                  "read items from FILE (- = standard input): 'sku' and 'buckets' columns")
      ->check(file_name())
      ->group("Source");
  sub->add_option("--format", o->format, "csv, tsv, json, ndjson or jsonl (default: by extension)")
      ->check(CLI::IsMember({"csv", "tsv", "json", "ndjson", "jsonl"}).description(""))
      ->group("Source");
  sub->add_option("--sku-column", o->columns.sku, "column holding the item id (default sku)")
      ->group("Source");
  add_delimiter_option(*sub, o->columns);
  sub->add_option("--request-ttl", o->request_ttl_s,
                  "the --request-ttl of the deductions whose request ids move to the new layout "
                  "(default 86400)")
      ->check(integer_range(1, 1LL << 32))
      ->group("Retries");
  add_common_footer(*sub);
  sub->callback([&program, o] { program.run = [&program, o] { return run_split(program, *o); }; });
}

}  // namespace stockctl
