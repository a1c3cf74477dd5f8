#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sku.h"
#include "sources/record.h"

namespace stockctl {

/// Column names of a source, as renamed by --sku-column, --stock-column, ...
struct SourceColumns {
  std::string sku = "sku";
  std::string stock = "stock";
  std::string total = "total";
  std::string issued = "issued";
  std::string qty = "qty";
  std::string request_id = "request_id";
  /// The request id column was named on the command line: a source without it is invalid,
  /// rather than applied without ids (a re-run would then apply every row again).
  bool request_id_required = false;
  /// Which stock columns the command line chose (--stock-column, or --total-column /
  /// --issued-column): a source with both kinds is ambiguous unless one was chosen.
  enum class StockChoice { unset, stock, total_issued };
  bool stock_named = false;         ///< --stock-column was given
  bool total_issued_named = false;  ///< --total-column or --issued-column was given
  /// --stock-column alone chooses `stock`, --total-column or --issued-column alone
  /// `total - issued`; neither or both choose nothing.
  StockChoice stock_choice() const;
  /// --delimiter: the field separator of CSV.
  char delimiter = ',';
};

/// A row that sets an item's stock (init, rebuild, --init-from).
struct StockRow {
  std::string sku;
  std::int64_t value = 0;  ///< -1 = unlimited
  std::size_t line = 0;
  bool sku_valid = false;  ///< the SKU passed validate_sku, even when the rest of the row did not
  /// The value is `total - issued`, which counts held units as not issued: the units of the
  /// item's live holds are left out of the stock written.
  bool counts_held = false;
  /// The `buckets` column (an export of a split item): 1 to 64; 0 where the row says nothing.
  int buckets = 0;
};

/// A row of a batch deduct or add.
struct OpRow {
  std::string sku;
  std::int64_t qty = 0;
  std::string request_id;
  std::size_t line = 0;
  bool sku_valid = false;  ///< the SKU passed validate_sku, even when the rest of the row did not
};

/// The SKU of a record into `sku`: its map key for a JSON object map, else its first field
/// (the `column` asked for first), checked with accept_sku. Returns why it is invalid, or "".
std::string read_record_sku(const Record& record, const std::string& column,
                            const KeyScheme& scheme, std::string& sku);

/// The columns stock rows are read from: sku, stock, total, issued (in that order), and for
/// init and rebuild `buckets` (`with_buckets`; a source of initial stock has no use for it).
WantedColumns stock_columns(const SourceColumns& names, bool with_buckets = false);
/// The columns batch rows are read from: sku, qty, request_id (in that order).
WantedColumns op_columns(const SourceColumns& names);

/// Returns why a header with these stock columns cannot be used, or "".
std::string check_stock_header(const std::vector<bool>& present, const SourceColumns& names);
/// Returns why a header with these batch columns cannot be used, or "".
std::string check_op_header(const std::vector<bool>& present, const SourceColumns& names);

/// Turns a record into a stock row: the `stock` column, else `total - issued`. Returns why it
/// is invalid, or "".
std::string interpret_stock_row(const Record& record, const SourceColumns& names,
                                const KeyScheme& scheme, StockRow& row);

/// Turns a record into a batch row. Returns why it is invalid, or "".
std::string interpret_op_row(const Record& record, const SourceColumns& names,
                             const KeyScheme& scheme, OpRow& row);

}  // namespace stockctl
