// `get SKU...`, `get --file F`, `get -`: read items' stock, pipelined, in input order.

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "app/context.h"
#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "base/text.h"
#include "bulk/split_runner.h"
#include "bulk/validated_rows.h"
#include "cli/common_options.h"
#include "commands/program.h"
#include "core/error_reply.h"
#include "core/sku.h"
#include "core/split_layout.h"
#include "redis/scripts/held.h"
#include "sources/line_input.h"
#include "sources/open_source.h"
#include "sources/rows.h"

namespace stockctl {
namespace {

struct GetOptions {
  std::vector<std::string> skus;
  std::string file;    ///< a source, or one SKU per line; "-" = standard input
  std::string format;  ///< --format: a source format or "lines"; empty: by the file's name
  SourceColumns columns;
  bool columns_given = false;  ///< --sku-column or --delimiter, which only a source has
  bool details = false;
  bool cluster = false;  ///< --cluster (a common option)
};

// How `get --file` reads its file: a source format by --format or the file's extension (so
// that an export reads back), else one SKU per line, as plain text and standard input are.
std::optional<Format> source_format(const GetOptions& o) {
  if (o.format == "lines") return std::nullopt;
  if (!o.format.empty()) return parse_format(o.format);
  if (o.file == "-") return std::nullopt;
  return format_from_extension(o.file);
}

ItemResult get_item(const Context& ctx, std::string sku, bool details) {
  ItemResult item;
  item.op = "get";
  item.sku = std::move(sku);
  item.has_held = true;
  item.details = details;
  if (std::string problem = accept_sku(item.sku, ctx.scheme()); !problem.empty()) {
    set_error(item, Status::invalid, problem);
  } else {
    item.key = stock_key(ctx.scheme(), item.sku);
  }
  return item;
}

// The calls that read one item: its value and holds, and with --details its expiry and its init
// lock's.
void append_reads(std::vector<Call>& calls, const ItemResult& item) {
  calls.push_back(Call::read({"GET", item.key}));
  calls.push_back(held_view_call(item.key));
  if (!item.details) return;
  calls.push_back(Call::read({"TTL", item.key}));
  calls.push_back(Call::read({"PTTL", companion_key(item.key, kLockSuffix)}));
}

std::optional<std::int64_t> remaining(const CallResult& r) {
  if (r.state != CallResult::State::replied || r.reply.type != Reply::Type::integer ||
      r.reply.integer < 0) {
    return std::nullopt;  // -1: no expiry, -2: no such key
  }
  return r.reply.integer;
}

void apply_reads(ItemResult& item, const CallResult* results) {
  const CallResult& r = results[0];
  if (r.state != CallResult::State::replied) return set_error(item, Status::error, r.error);
  if (r.reply.is_error()) return apply_error_reply(item, r.reply.str);
  // The logical state: the units of expired holds not yet given back count in the stock, as
  // they will once the next touch or reap returns them, and not as held.
  const std::optional<HeldView> view = held_view_from(results[1]);
  if (results[1].state == CallResult::State::replied && results[1].reply.is_error()) {
    // Without its holds the stock would leave out the units of holds that expired: no answer
    // rather than a number too low.
    return set_error(item, Status::error,
                     fmt::format("cannot read the holds of {}: {}", item.key,
                                 escape_control(without_script_location(results[1].reply.str))));
  }
  apply_stored_value(
      item, view ? logical_value(r.reply.string_or_nil(), *view) : r.reply.string_or_nil());
  if (item.status != Status::error && view) item.held = view->held;
  if (!item.details) return;
  item.ttl_s = remaining(results[2]);
  item.lock_ttl_ms = remaining(results[3]);
  // A lock with no expiry is held for ever (not stockctl's: its locks always expire). It must
  // not read as no lock: -1, as Redis says it.
  const CallResult& lock = results[3];
  if (lock.state == CallResult::State::replied && lock.reply.type == Reply::Type::integer &&
      lock.reply.integer == -1) {
    item.lock_ttl_ms = -1;
  }
}

// The layout record the item's GET found, when the item is split (docs/split.md).
std::optional<std::string> split_record_read(const CallResult& get) {
  if (get.state != CallResult::State::replied || get.reply.type != Reply::Type::string ||
      !is_split_record(get.reply.str)) {
    return std::nullopt;
  }
  return get.reply.str;
}

// Reads windows of items with two windows in flight, printing each in input order.
class GetPipeline {
 public:
  /// `echo_invalid`: invalid items are told on standard error here, in order with the others
  /// (false when the caller told them already, with their file and line). `cluster`: --details
  /// of a split item names each bucket's primary.
  GetPipeline(Context& ctx, bool echo_invalid, bool cluster)
      : ctx_(ctx), echo_invalid_(echo_invalid), cluster_(cluster) {
    window_.reserve(kWindow);
  }

  void add(ItemResult item) {
    window_.push_back(std::move(item));
    if (window_.size() == kWindow) send();
  }
  /// Reads and prints every item added so far, and flushes standard output: the input has
  /// nothing more for now, and whoever writes it may be waiting for these answers.
  void answer_now() {
    send();
    while (!in_flight_.empty()) receive();
    ctx_.out().flush();
  }
  ExitCode finish() {
    send();
    while (!in_flight_.empty()) receive();
    return fold_.code();
  }

 private:
  void send() {
    if (window_.empty()) return;
    Client* client = ctx_.redis_or_null();
    if (client == nullptr) return report_unconnected();
    std::vector<Call> calls;
    calls.reserve(window_.size());
    for (const ItemResult& item : window_) {
      if (!item.key.empty()) append_reads(calls, item);
    }
    client->start(std::move(calls));
    in_flight_.push_back(std::move(window_));
    window_ = {};
    window_.reserve(kWindow);  // growing would move every item already in the window
    if (in_flight_.size() > 1) receive();
  }
  // No connection could be made, and the reason was printed once: each item still gets its
  // line, `error` with that reason, and the rest of the input is read for its lines too.
  void report_unconnected() {
    for (ItemResult& item : window_) {
      if (!item.key.empty()) {
        set_error(item, Status::error, ctx_.connect_error());
      } else if (echo_invalid_) {
        errors_.add(item.sku, item.error);
      }
      ctx_.emit(item, fold_);
    }
    window_.clear();
  }
  void receive() {
    std::vector<ItemResult>& items = in_flight_.front();
    std::vector<CallResult> results = ctx_.redis().finish();
    std::size_t next = 0;
    for (ItemResult& item : items) {
      if (!item.key.empty()) {
        apply_reads(item, &results[next]);
        // A split item's stock is in its buckets: read them now (a rare item, one more round).
        if (std::optional<std::string> record = split_record_read(results[next])) {
          read_split_item(ctx_.redis(), item, *record, slot_ranges(item));
          const std::optional<HeldView> view = held_view_from(results[next + 1]);
          if (item.status == Status::ok && view) item.held = view->held;
        }
        next += item.details ? 4 : 2;
      }
      if (item.status == Status::error || (echo_invalid_ && item.status == Status::invalid)) {
        errors_.add(item.sku, item.error);
      }
      ctx_.emit(item, fold_);
    }
    in_flight_.pop_front();
  }
  // The slot map, read once, for --details on a cluster: each bucket's primary.
  const std::vector<SlotRange>& slot_ranges(const ItemResult& item) {
    if (item.details && cluster_ && !ranges_read_) {
      ranges_ = read_slot_ranges(ctx_.redis(), true);
      ranges_read_ = true;
    }
    return ranges_;
  }

  Context& ctx_;
  std::vector<ItemResult> window_;
  std::deque<std::vector<ItemResult>> in_flight_;
  bool echo_invalid_;
  bool cluster_;
  bool ranges_read_ = false;
  std::vector<SlotRange> ranges_;
  ItemErrorEcho errors_;
  ExitFold fold_;
};

// Every SKU gets its line, in input order, invalid ones included: a read changes nothing, so
// the valid ones are read all the same.
ExitCode get_listed(Context& ctx, const GetOptions& o) {
  std::vector<ItemResult> items;
  items.reserve(o.skus.size());
  for (const std::string& sku : o.skus) {
    ItemResult& item = items.emplace_back(get_item(ctx, sku, o.details));
    if (item.status == Status::invalid) {
      item.has_held = false;
      item.details = false;
    }
  }
  GetPipeline pipeline(ctx, true, o.cluster);
  for (ItemResult& item : items) pipeline.add(std::move(item));
  return pipeline.finish();
}

// One SKU per line; a line that is not a valid SKU is reported invalid in its place, and the
// others are read all the same (a read changes nothing). Whenever the next line has not
// arrived yet (a pipe or terminal), the lines read so far are answered first.
ExitCode get_from_lines(Context& ctx, const GetOptions& o) {
  LineInput in(o.file);
  const std::string name = o.file == "-" ? "<stdin>" : o.file;
  GetPipeline pipeline(ctx, false, o.cluster);
  std::string line;
  for (std::size_t number = 1; !interrupted(); ++number) {
    if (in.would_wait()) pipeline.answer_now();
    if (!in.next(line)) break;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    ItemResult item = get_item(ctx, std::move(line), o.details);
    if (item.status == Status::invalid) {
      print_error(fmt::format("{}:{}: item '{}': {}", name, number, item.sku, item.error));
      item.has_held = false;
      item.details = false;
    }
    pipeline.add(std::move(item));
  }
  ExitCode code = pipeline.finish();  // the lines read so far are all answered
  stop_if_interrupted();
  return code;
}

// Every row of a source, by its SKU column (or a JSON object map's keys): an invalid row is
// reported in its place, naming file and line, and the others are read all the same.
ExitCode get_from_source(Context& ctx, const GetOptions& o, Format format) {
  Source source(o.file, format, o.columns.delimiter);
  GetPipeline pipeline(ctx, false, o.cluster);
  std::string fatal;
  RecordHandler handler{
      [&o](const std::vector<bool>& present) {
        return present[0] ? std::string() : fmt::format("header has no '{}' column", o.columns.sku);
      },
      [&](Record& record) {
        if (record.fatal) {
          fatal = fmt::format("{}:{}: {}", source.name(), record.line, record.error);
          return false;
        }
        std::string sku;
        std::string problem = record.keyed || !record.fields.empty()
                                  ? read_record_sku(record, o.columns.sku, ctx.scheme(), sku)
                                  : std::string("no SKU");
        if (!record.error.empty()) problem = record.error;
        ItemResult item = get_item(ctx, sku, o.details);
        if (!problem.empty()) {
          const std::string why = fmt::format("{}:{}: {}", source.name(), record.line, problem);
          print_error(why);
          set_error(item, Status::invalid, why);
          item.key.clear();
          item.has_held = false;
          item.details = false;
        }
        pipeline.add(std::move(item));
        return !interrupted();
      }};
  source.read({o.columns.sku}, handler);
  ExitCode code = pipeline.finish();  // the rows read so far are all answered
  if (!fatal.empty()) throw InputError(fatal);
  stop_if_interrupted();
  return code;
}

ExitCode run_get(Program& program, GetOptions& o) {
  Context ctx(program);
  o.cluster = program.common.cluster;
  if (!o.file.empty() && !o.skus.empty()) throw InputError("get: give SKUs or --file, not both");
  if (o.skus.size() == 1 && o.skus[0] == "-") o.file = "-";
  const bool columns_given = o.columns_given || o.columns.delimiter != ',';
  if (o.file.empty() && (!o.format.empty() || columns_given)) {
    throw InputError("get: --format, --sku-column and --delimiter are for --file FILE (or -)");
  }
  if (!o.file.empty()) {
    if (std::optional<Format> format = source_format(o)) return get_from_source(ctx, o, *format);
    if (columns_given) {
      throw InputError(fmt::format(
          "get: --sku-column and --delimiter are for a source; {} is read as one SKU per line "
          "(give --format csv|tsv|json|ndjson)",
          o.file == "-" ? "standard input" : o.file));
    }
    return get_from_lines(ctx, o);
  }
  if (o.skus.empty()) throw InputError("get needs SKU..., --file FILE, or - for standard input");
  return get_listed(ctx, o);
}

}  // namespace

void setup_get(CLI::App& app, Program& program) {
  auto options = std::make_shared<GetOptions>();
  CLI::App* sub = app.add_subcommand("get", "read the current stock of one or more items");
  sub->add_option("SKU", options->skus, "item ids; - reads them from standard input");
  sub->add_option("-f,--file", options->file,
                  "read item ids from FILE (- = standard input): a source by its name or --format "
                  "(.csv .tsv .json .ndjson .jsonl, the 'sku' column), else one per line")
      ->check(file_name());
  sub->add_option("--format", options->format,
                  "csv, tsv, json, ndjson, jsonl, or lines (one SKU per line; the default for "
                  "standard input and names without those extensions)")
      ->check(CLI::IsMember({"csv", "tsv", "json", "ndjson", "jsonl", "lines"}).description(""))
      ->group("Source");
  sub->add_option("--sku-column", options->columns.sku, "column holding the item id (default sku)")
      ->each([options](const std::string&) { options->columns_given = true; })
      ->group("Source");
  add_delimiter_option(*sub, options->columns);
  sub->add_flag("--details", options->details,
                "also print ttl (seconds until the key expires) and lock_ttl (ms left on an init "
                "lock; -1: a lock with no expiry)");
  add_common_footer(*sub);
  sub->callback([&program, options] {
    program.run = [&program, options] { return run_get(program, *options); };
  });
}

}  // namespace stockctl
