// `export`: every item under the prefix, on every primary, streamed with SCAN and pipelined
// reads, as NDJSON, CSV, TSV or JSON.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "app/context.h"
#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "base/text.h"
#include "bulk/item_scan.h"
#include "bulk/split_runner.h"
#include "cli/common_options.h"
#include "commands/program.h"
#include "core/error_reply.h"
#include "core/quantity.h"
#include "core/sku.h"
#include "core/split_layout.h"
#include "core/split_plan.h"
#include "output/atomic_file.h"
#include "output/export_format.h"
#include "redis/errors.h"
#include "redis/scripts/held.h"

namespace stockctl {
namespace {

struct ExportOptions {
  std::string match = "*";
  std::string format = "ndjson";
  std::string output;
  long long count = 1000;     ///< SCAN COUNT: keys looked at per round trip
  bool keep_partial = false;  ///< put --output in place even when items were skipped
  bool allow_empty = false;   ///< put --output in place even when no item was found
};

// Where the export goes: standard output, or --output (a regular file written atomically, a
// device or FIFO in place).
class ExportSink {
 public:
  explicit ExportSink(const std::string& path) {
    if (!path.empty()) file_ = std::make_unique<AtomicFile>(path);
  }
  void write(std::string& text) {
    if (file_) {
      file_->write(text);
    } else if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
      throw IoError(fmt::format("cannot write standard output: {}", std::strerror(errno)));
    }
    text.clear();
  }
  void commit() {
    if (file_) return file_->commit();
    if (std::fflush(stdout) != 0) {
      throw IoError(fmt::format("cannot write standard output: {}", std::strerror(errno)));
    }
  }
  /// True when the output replaces a file only once it is committed: a partial export can still
  /// leave the file there as it was.
  bool replaces() const { return file_ && file_->mode() == OutputMode::replace; }
  /// The first bytes of the file a commit would replace; "" when there is none.
  std::string replaced_head() const {
    std::string head;
    if (!replaces()) return head;
    std::FILE* f = std::fopen(file_->path().c_str(), "rb");
    if (f == nullptr) return head;
    head.resize(1 << 16);
    head.resize(std::fread(head.data(), 1, head.size(), f));
    std::fclose(f);
    return head;
  }

 private:
  std::unique_ptr<AtomicFile> file_;
};

struct ExportRun {
  Context& ctx;
  ExportFormat format;
  ExportSink& sink;
  std::string buffer;
  std::size_t items = 0;
  std::size_t corrupt = 0;
  std::size_t splitting = 0;  ///< items being split or merged: their units are in transfer

  std::size_t skipped() const { return corrupt + splitting; }
};

// Another program may have stored an item whose id has white space around it; it is exported
// as it is, but reading the export back refuses that row (or --trim names another item).
void warn_if_padded(const std::string& sku) {
  if (trim_white_space(sku).size() == sku.size()) return;
  print_warning(fmt::format(
      "item {} has white space at its start or end: exported as it is, but a source with it is "
      "invalid until the item is renamed (--trim would read it as another item)",
      quote_value(sku)));
}

// Another program may have stored an item whose id is not UTF-8: JSON cannot carry its bytes
// (they are written as U+FFFD, which names another item), and stockctl reads no such id back.
void warn_if_not_utf8(const std::string& sku, ExportFormat format) {
  if (valid_utf8(sku)) return;
  const bool json = format == ExportFormat::ndjson || format == ExportFormat::json;
  print_warning(fmt::format(
      "item {} is not valid UTF-8: exported {}, but a source with it is invalid until the item "
      "is renamed",
      quote_value(sku),
      json ? "with its bytes replaced by U+FFFD (--format csv keeps them)" : "as it is"));
}

// Reads the value and expiry of one SCAN batch's items (pipelined) and writes them.
void export_batch(ExportRun& run, std::vector<ScannedItem>& batch) {
  std::vector<Call> calls;
  calls.reserve(batch.size() * 3);
  for (const ScannedItem& item : batch) {
    calls.push_back(Call::read({"GET", item.key}));
    calls.push_back(Call::read({"TTL", item.key}));
    calls.push_back(held_view_call(item.key));
  }
  std::vector<CallResult> results = run.ctx.redis().run(calls);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const CallResult& value = results[3 * i];
    const CallResult& ttl = results[3 * i + 1];
    const CallResult& held = results[3 * i + 2];
    for (const CallResult* r : {&value, &ttl, &held}) {
      if (r->state != CallResult::State::replied) {
        throw ConnectionError(fmt::format("{}: {}", batch[i].key, r->error));
      }
    }
    // A key deleted since SCAN named it was not present for the whole scan: leave it out.
    if (value.reply.is_nil() || ttl.reply.integer == -2) continue;
    if (held.reply.is_error()) {
      // Without its holds the stock would leave out the units of holds that expired, and a
      // restore from the snapshot would lose them: no snapshot rather than a wrong one.
      throw StockctlError(fmt::format("cannot read the holds of {}: {}", batch[i].key,
                                      escape_control(without_script_location(held.reply.str))));
    }
    // The logical state, as get shows it: expired holds' units not yet given back are stock.
    const std::optional<HeldView> view = held_view_from(held);
    std::optional<std::int64_t> stock;
    int buckets = 0;
    if (!value.reply.is_error()) {
      const std::optional<std::string> logical =
          view ? logical_value(value.reply.str, *view) : value.reply.str;
      if (!logical) continue;  // deleted between the GET and the view's own read
      stock = parse_stored_value(*logical);
    }
    if (!stock && !value.reply.is_error() && is_split_record(value.reply.str)) {
      // An item being split or merged has units in transfer, in no bucket: it has no total to
      // write until the same split command (or a re-run) finishes it.
      if (const std::optional<SplitRecord> record = parse_split_record(value.reply.str);
          record && record->state != SplitState::live) {
        ++run.splitting;
        print_error(fmt::format(
            "item {} is being split or merged (state {}): not exported; the same stockctl "
            "split command, run again, finishes it",
            quote_value(batch[i].sku), split_state_name(record->state)));
        continue;
      }
      // A split item: its total, as get reads it (split items have no holds and no expiry).
      ItemResult split;
      split.sku = batch[i].sku;
      split.key = batch[i].key;
      read_split_item(run.ctx.redis(), split, value.reply.str, {});
      if (split.status != Status::ok) {
        ++run.corrupt;
        print_error(fmt::format("item '{}': {}; not exported", split.sku, split.error));
        continue;
      }
      stock = split.stock;
      buckets = split.buckets;
    }
    if (!stock) {
      ++run.corrupt;
      print_error(fmt::format(
          "item '{}': {} {}; not exported", batch[i].sku, batch[i].key,
          value.reply.error_kind() == ErrorReply::wrongtype
              ? "holds another kind of value than a stock value (WRONGTYPE; redis-cli TYPE "
                "shows it)"
          : value.reply.is_error() ? "could not be read: " + value.reply.str
                                   : "holds '" + value.reply.str + "'"));
      continue;
    }
    warn_if_padded(batch[i].sku);
    warn_if_not_utf8(batch[i].sku, run.format);
    ExportRow row{
        std::move(batch[i].sku), *stock, view ? view->held : 0,
        ttl.reply.integer >= 0 ? std::optional<std::int64_t>(ttl.reply.integer) : std::nullopt,
        buckets};
    append_export_row(run.buffer, run.format, row, run.items == 0);
    ++run.items;
  }
  run.sink.write(run.buffer);
}

// Whether the start of an export file (in any format) holds an item: more than one line, or one
// line that is not an export without items (a CSV or TSV header, "[]").
bool holds_items(std::string head) {
  while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.pop_back();
  if (head.empty()) return false;
  if (head.find('\n') != std::string::npos) return true;
  for (ExportFormat format :
       {ExportFormat::ndjson, ExportFormat::csv, ExportFormat::tsv, ExportFormat::json}) {
    std::string empty;
    append_export_head(empty, format);
    append_export_tail(empty, format, true);
    while (!empty.empty() && (empty.back() == '\n' || empty.back() == '\r')) empty.pop_back();
    if (head == empty) return false;
  }
  return true;
}

// An export that found no item at all would replace a file that holds items with an empty one:
// after a cache loss, the nightly export would destroy the snapshot the rebuild needs.
bool would_empty_a_file(const ExportRun& run, const ExportOptions& o) {
  if (run.items > 0 || run.skipped() > 0 || o.allow_empty) return false;
  return holds_items(run.sink.replaced_head());
}

std::string skipped_message(const ExportRun& run, const std::string& output, bool written) {
  std::vector<std::string> why;
  if (run.corrupt > 0) why.push_back(fmt::format("{} corrupt", run.corrupt));
  if (run.splitting > 0) why.push_back(fmt::format("{} being split or merged", run.splitting));
  std::string skipped = fmt::format("{} {} not exported ({})", run.skipped(),
                                    run.skipped() == 1 ? "item" : "items", fmt::join(why, ", "));
  if (output.empty()) return skipped;
  if (written) return fmt::format("{}; {} holds the others", skipped, output);
  return fmt::format("{}; {} left as it was (--keep-partial writes the others to it)", skipped,
                     output);
}

ExitCode run_export(Program& program, const ExportOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  Context ctx(program);
  if (ctx.scheme().hashtag && o.match.find_first_of("{}") != std::string::npos) {
    throw InputError(fmt::format(
        "--match '{}': item ids hold no '{{' or '}}' under hash tags, so it would match nothing "
        "(see --no-hashtag)",
        o.match));
  }
  // `--output -` (or /dev/stdout) is standard output, with no summary object in the middle of
  // the data.
  const std::string output = names_standard_output(o.output) ? "" : o.output;
  ExportSink sink(output);
  ExportRun run{ctx, *parse_export_format(o.format), sink, {}, 0, 0, 0};
  auto summarize = [&](bool written, const std::string& error) {
    if (output.empty()) return;
    nlohmann::ordered_json summary;
    summary["op"] = "export";
    summary["items"] = run.items;
    summary["skipped"] = {{"corrupt", run.corrupt}, {"splitting", run.splitting}};
    summary["output"] = o.output;
    summary["written"] = written;
    summary["elapsed_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count();
    if (!error.empty()) summary["error"] = error;
    ctx.out().write_summary(summary);
  };
  append_export_head(run.buffer, run.format);
  try {
    scan_items(ctx, o.match, o.count, [&run](std::vector<ScannedItem>& batch) {
      stop_if_interrupted();
      export_batch(run, batch);
    });
  } catch (const StockctlError& e) {
    // Interrupted, or the server went away: the file is left as it was, and the summary says
    // so, as every command's run ends with its summary.
    summarize(false, e.what());
    throw;
  }
  append_export_tail(run.buffer, run.format, run.items == 0);
  sink.write(run.buffer);
  if (would_empty_a_file(run, o)) {
    const std::string error = fmt::format(
        "no item {} (was the cache lost?); {} holds items and was left as it was (--allow-empty "
        "replaces it with an empty export)",
        o.match == "*" ? fmt::format("under the prefix '{}'", ctx.scheme().prefix)
                       : fmt::format("matches '{}'", o.match),
        output);
    summarize(false, error);
    print_error(error);
    return ExitCode::failure;
  }
  // An export that left items out is not the snapshot it claims to be: it does not replace the
  // last good file (a cron job's restore source) unless asked.
  const bool written = run.skipped() == 0 || o.keep_partial || !sink.replaces();
  if (written) sink.commit();
  summarize(written, "");
  if (run.skipped() == 0) return ExitCode::ok;
  print_error(skipped_message(run, output, written));
  return ExitCode::failure;
}

}  // namespace

void setup_export(CLI::App& app, Program& program) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand(
      "export", "write every item's stock (a snapshot, and a source for init and rebuild)");
  sub->add_option("--match", o->match, "only items whose SKU matches this glob (Redis SCAN rules)");
  sub->add_option("--format", o->format, "ndjson (default), csv, tsv or json")
      ->check(CLI::IsMember({"ndjson", "jsonl", "csv", "tsv", "json"}).description(""));
  CLI::Option* output = sub->add_option("-o,--output", o->output,
                                        "write to FILE (a file atomically, a device or FIFO in "
                                        "place; - for standard output) and print a summary "
                                        "object on standard output")
                            ->check(file_name());
  sub->add_flag("--keep-partial", o->keep_partial,
                "with --output: put the file in place even when items were left out (corrupt, or "
                "being split or merged; by default it is left as it was)")
      ->needs(output);
  sub->add_flag("--allow-empty", o->allow_empty,
                "with --output: replace a file that holds items even when no item was found (by "
                "default it is left as it was, exit 1)")
      ->needs(output);
  sub->add_option("--scan-count", o->count, "keys SCAN looks at per round trip (default 1000)")
      ->check(integer_range(1, 1000000));
  add_common_footer(*sub);
  sub->callback([&program, o] { program.run = [&program, o] { return run_export(program, *o); }; });
}

}  // namespace stockctl
