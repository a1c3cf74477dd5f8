#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/errors.h"
#include "core/stock_index.h"  // sku_hash: the 8-byte hash duplicate detection keeps per row
#include "sources/open_source.h"

namespace stockctl {

/// How many rows a bulk path sends as one window (two windows are in flight at once).
inline constexpr std::size_t kWindow = 1024;
/// The window where writes wait for replicas: each window ends with a WAIT, which holds back
/// the next window on the connection until the replica has caught up, so four times fewer
/// WAITs stall the server four times less often (docs/benchmarks.md, "The defaults where a
/// replica is attached").
inline constexpr std::size_t kWaitingWindow = 4 * kWindow;

/// The rows of one window for a run whose writes `wait_for_replicas` or not.
constexpr std::size_t window_rows(bool wait_for_replicas) {
  return wait_for_replicas ? kWaitingWindow : kWindow;
}

/// How a command reads rows of one kind from a source.
template <class Row>
struct RowReader {
  WantedColumns wanted;
  std::function<std::string(const std::vector<bool>&)> header;
  std::function<std::string(const Record&, Row&)> interpret;
  std::function<const std::string&(const Row&)> sku;  ///< set to check for duplicate SKUs
};

/// A row of an item that its source names more than once.
struct DuplicateRow {
  std::size_t line = 0;
  std::string why;  ///< "duplicate SKU (first on line 2)"
};

/// A source whose structure broke partway (an unterminated quote, a row of the wrong width...):
/// InputError, with what was read before it, so that the run's summary counts those rows.
class BrokenSource : public InputError {
 public:
  BrokenSource(const std::string& message, std::size_t rows, std::size_t invalid)
      : InputError(message), rows_(rows), invalid_(invalid) {}
  std::size_t rows() const { return rows_; }
  std::size_t invalid() const { return invalid_; }

 private:
  std::size_t rows_;
  std::size_t invalid_;
};

/// What validation found.
struct Validation {
  std::size_t rows = 0;
  std::size_t invalid = 0;
  /// Every row of an item named more than once, by its place among the source's records.
  std::unordered_map<std::size_t, DuplicateRow> duplicate_rows;
  std::vector<std::uint64_t> sku_hashes;  ///< with keep_hashes: sku_hash of every valid row, sorted
  /// Why nothing may be written ("F: 2 of 9 rows are invalid; nothing was written ..."), or "".
  std::string refusal;
};

/// Reads the whole source once, before anything is written: prints each invalid row as
/// "FILE:LINE: problem" on standard error, and throws InputError when there is any, unless
/// `skip_invalid`. A fatal error (unreadable structure) always throws. Duplicate detection keeps
/// 8 bytes per row (a hash), then re-reads only to confirm candidates exactly; `keep_hashes`
/// hands those hashes back in the result instead of freeing them (rebuild --extra).
template <class Row>
Validation validate_source(Source& source, const RowReader<Row>& reader, bool skip_invalid,
                           bool keep_hashes = false);

/// validate_source that hands back invalid rows (without `skip_invalid`) as the result's
/// `refusal` instead of throwing it, so that the caller can still report them; a fatal error
/// still throws InputError.
template <class Row>
Validation check_source(Source& source, const RowReader<Row>& reader, bool skip_invalid,
                        bool keep_hashes = false);

/// Reads the source again, parsing each row once, and hands its rows to `each_window` in order,
/// in windows of up to `rows` items: `make_item(row, problem)` makes each row's item, where
/// `problem` is "" for a valid row, else why it is invalid (duplicates found by validation
/// included). The items are handed over as an rvalue vector the callee may keep.
template <class Row, class MakeItem, class EachWindow>
void for_each_window(Source& source, const RowReader<Row>& reader, const Validation& validation,
                     MakeItem&& make_item, EachWindow&& each_window, std::size_t rows = kWindow);

}  // namespace stockctl

#include "bulk/validated_rows_impl.h"
