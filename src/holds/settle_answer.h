#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/context.h"
#include "core/exit_fold.h"
#include "core/outcome.h"

namespace stockctl {

/// One line of a hold's or order's record.
struct RecordLine {
  std::string sku;
  std::string key;
  std::int64_t qty = 0;
};

/// The lines of a record ([sku, key, qty, ...] each, in JSON: a cluster cart's record, or a hold
/// script's record of the previous version), or nullopt when it is not one stockctl wrote.
std::optional<std::vector<RecordLine>> record_lines(const std::string& text);

/// The lines of the hold script's record (one string: after its first line and the kind,
/// "<sku>\t<key>\t<qty>" each; lua/hold-4002.lua, "The record"), or nullopt when it is not
/// one stockctl wrote.
std::optional<std::vector<RecordLine>> hold_record_lines(std::string_view text);

/// The answer line of confirm, release or cancel.
nlohmann::ordered_json settle_json(const std::string& action, const std::string& id, Status status,
                                   const std::vector<RecordLine>& lines,
                                   const std::vector<std::optional<std::int64_t>>& stocks,
                                   bool replayed, const std::string& error);

/// What became of one confirm, release or cancel: the fields of its answer line.
struct Settled {
  Status status = Status::ok;
  std::vector<RecordLine> lines;
  std::vector<std::optional<std::int64_t>> stocks;  ///< per line, after the settle
  bool replayed = false;
  std::string error;
  /// The lines (indexes into `lines`) whose units this call gave back while their stock key was
  /// missing: they went back nowhere, and the answer warns about them.
  std::vector<std::size_t> nowhere;
};

/// Prints the answer line of confirm, release or cancel of `id` (and, when the status calls for
/// one, its error line on stderr; a warning for each line whose units went back nowhere) and adds
/// the status to `fold`: `expired` from release counts as 0 (the units are back, which is what
/// release asked for).
void print_settle(Context& ctx, const std::string& action, const std::string& id,
                  const Settled& settled, ExitFold& fold);

/// What reap did, on one Redis or a cluster.
struct Reaped {
  std::int64_t holds = 0;  ///< holds and orders whose units went back (expired or aborted)
  std::int64_t units = 0;  ///< the units given back into their items' stock keys
  /// Per item, the units given back while its stock key was missing (deleted or evicted under
  /// the holds): they went nowhere, are not in `units`, and the summary warns about each.
  std::vector<RecordLine> nowhere;
  /// Items (sku, key; qty unused) whose stored value is not a stock value: their expired holds
  /// stay held until it is repaired.
  std::vector<RecordLine> kept;
  /// Why a record's groups could not be finished (a cluster's reap): the record keeps its
  /// decision and stays due, and the next reap tries it again.
  std::vector<std::string> unfinished;
};

/// Prints reap's warnings (one per item of `reaped.nowhere`), an error per item of `kept`, and
/// its summary; returns the exit status (1 when an item was kept).
ExitCode print_reap(Context& ctx, const Reaped& reaped);

/// "ok", "expired", ... as a settle script answers them ("released": a conflict, the confirm of
/// a released hold).
Status settle_status(const std::string& word);

/// Why `action` does not apply (the error text of a conflict answer, whose script word is
/// `word`: "conflict", or "released" for a confirm of a released hold); "" for other answers.
std::string settle_conflict(const std::string& action, const std::string& word);

/// Why a confirm was answered "removed": `line` no longer held the hold's units, so the hold
/// (on a cluster, its slot group) was released instead of confirmed.
std::string removed_line_error(const RecordLine& line);

}  // namespace stockctl
