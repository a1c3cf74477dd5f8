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
};

/// A row of a batch deduct or add.
struct OpRow {
  std::string sku;
  std::int64_t qty = 0;
  std::string request_id;
  std::size_t line = 0;
  bool sku_valid = false;  ///< the SKU passed validate_sku, even when the rest of the row did not
};

/// The columns stock rows are read from: sku, stock, total, issued (in that order).
WantedColumns stock_columns(const SourceColumns& names);
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
