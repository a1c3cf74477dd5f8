#include "sources/rows.h"

#include <fmt/format.h>

#include "core/quantity.h"

namespace stockctl {
namespace {

enum StockColumn { kSku, kStock, kTotal, kIssued, kBuckets };
enum OpColumn { kOpSku, kOpQty, kOpRequestId };

}  // namespace

std::string read_record_sku(const Record& record, const std::string& column,
                            const KeyScheme& scheme, std::string& sku) {
  if (record.keyed) {
    sku = record.sku_key;
  } else if (!record.fields[0].present) {
    return fmt::format("no '{}' column", column);
  } else if (record.fields[0].null) {
    return fmt::format("column '{}' is NULL", column);
  } else {
    sku = record.fields[0].text;
  }
  std::string problem = accept_sku(sku, scheme);
  return problem.empty() ? problem : fmt::format("column '{}': {}", column, problem);
}

namespace {

std::string read_number(const Field& f, const std::string& column,
                        ParsedNumber (*parse)(std::string_view), std::int64_t& out) {
  if (!f.present) return fmt::format("no value in column '{}'", column);
  if (f.null) return fmt::format("column '{}' is NULL", column);
  ParsedNumber n = parse(f.text);
  if (!n.ok()) return fmt::format("column '{}': {}", column, n.error);
  out = n.value;
  return {};
}

// The `buckets` column: how many buckets an export's split item was split over. Absent, NULL or
// empty: the row says nothing (0).
std::string read_buckets(const Field& f, int& buckets) {
  buckets = 0;
  if (!f.present || f.null || f.text.empty()) return {};
  const ParsedNumber n = parse_count(f.text);
  if (!n.ok() || n.value < 1 || n.value > 64) {
    return fmt::format("column 'buckets': '{}' is not a whole number from 1 to 64", f.text);
  }
  buckets = static_cast<int>(n.value);
  return {};
}

}  // namespace

WantedColumns stock_columns(const SourceColumns& n, bool with_buckets) {
  if (!with_buckets) return {n.sku, n.stock, n.total, n.issued};
  return {n.sku, n.stock, n.total, n.issued, "buckets"};
}

WantedColumns op_columns(const SourceColumns& n) { return {n.sku, n.qty, n.request_id}; }

SourceColumns::StockChoice SourceColumns::stock_choice() const {
  if (stock_named == total_issued_named) return StockChoice::unset;
  return stock_named ? StockChoice::stock : StockChoice::total_issued;
}

namespace {

// Why a row or header naming both kinds of stock column cannot be read, or "": which one the
// export meant would be a guess.
std::string ambiguous_stock_columns(bool stock, bool total, bool issued, const SourceColumns& n) {
  if (!stock || !(total || issued) || n.stock_choice() != SourceColumns::StockChoice::unset) {
    return {};
  }
  std::string both = total && issued ? fmt::format("'{}' and '{}'", n.total, n.issued)
                                     : fmt::format("'{}'", total ? n.total : n.issued);
  return fmt::format(
      "both a '{}' column and {}: ambiguous; choose with --stock-column {} or "
      "--total-column {} --issued-column {}",
      n.stock, both, n.stock, n.total, n.issued);
}

}  // namespace

std::string check_stock_header(const std::vector<bool>& present, const SourceColumns& n) {
  if (!present[kSku]) return fmt::format("header has no '{}' column", n.sku);
  if (std::string e =
          ambiguous_stock_columns(present[kStock], present[kTotal], present[kIssued], n);
      !e.empty()) {
    return "header has " + e;
  }
  using Choice = SourceColumns::StockChoice;
  const bool stock = present[kStock] && n.stock_choice() != Choice::total_issued;
  const bool total_issued =
      present[kTotal] && present[kIssued] && n.stock_choice() != Choice::stock;
  if (stock || total_issued) return {};
  if (n.stock_choice() == Choice::stock) return fmt::format("header has no '{}' column", n.stock);
  if (n.stock_choice() == Choice::total_issued) {
    return fmt::format("header has no '{}' column", present[kTotal] ? n.issued : n.total);
  }
  return fmt::format("header has neither a '{}' column nor '{}' and '{}' columns", n.stock, n.total,
                     n.issued);
}

std::string check_op_header(const std::vector<bool>& present, const SourceColumns& n) {
  if (!present[kOpSku]) return fmt::format("header has no '{}' column", n.sku);
  if (!present[kOpQty]) return fmt::format("header has no '{}' column", n.qty);
  if (n.request_id_required && !present[kOpRequestId]) {
    return fmt::format("header has no '{}' column", n.request_id);
  }
  return {};
}

std::string interpret_stock_row(const Record& record, const SourceColumns& n,
                                const KeyScheme& scheme, StockRow& row) {
  row.line = record.line;
  // The SKU is read even from a malformed record, so that the row can be found by it.
  std::string sku_problem = record.keyed || !record.fields.empty()
                                ? read_record_sku(record, n.sku, scheme, row.sku)
                                : std::string("no SKU");
  row.sku_valid = sku_problem.empty();
  if (!record.error.empty()) return record.error;
  if (!sku_problem.empty()) return sku_problem;
  const auto& f = record.fields;
  row.counts_held = false;
  row.buckets = 0;
  if (f.size() > kBuckets) {
    if (std::string e = read_buckets(f[kBuckets], row.buckets); !e.empty()) return e;
  }
  // JSON rows are objects, each with its own keys: each row is checked as a header is.
  if (std::string e =
          ambiguous_stock_columns(f[kStock].present, f[kTotal].present, f[kIssued].present, n);
      !e.empty()) {
    return "row has " + e;
  }
  using Choice = SourceColumns::StockChoice;
  const bool use_stock = n.stock_choice() == Choice::stock ||
                         (n.stock_choice() == Choice::unset &&
                          (f[kStock].present || !(f[kTotal].present || f[kIssued].present)));
  if (use_stock) {
    return read_number(f[kStock], n.stock, parse_stock_value, row.value);
  }
  std::int64_t total = 0, issued = 0;
  if (std::string e = read_number(f[kTotal], n.total, parse_count, total); !e.empty()) return e;
  if (std::string e = read_number(f[kIssued], n.issued, parse_count, issued); !e.empty()) return e;
  if (issued > total) {
    return fmt::format("'{}' ({}) is greater than '{}' ({})", n.issued, issued, n.total, total);
  }
  row.value = total - issued;
  row.counts_held = true;
  return {};
}

std::string interpret_op_row(const Record& record, const SourceColumns& n, const KeyScheme& scheme,
                             OpRow& row) {
  if (!record.error.empty()) return record.error;
  row.line = record.line;
  std::string sku_problem = read_record_sku(record, n.sku, scheme, row.sku);
  row.sku_valid = sku_problem.empty();
  if (!row.sku_valid) return sku_problem;
  if (std::string e = read_number(record.fields[kOpQty], n.qty, parse_qty, row.qty); !e.empty()) {
    return e;
  }
  // A row that has the column must give an id: an empty cell taken as "no id" would make a
  // re-run apply that row again.
  const Field& id = record.fields[kOpRequestId];
  row.request_id.clear();
  if (!id.present) return {};
  if (id.null) return fmt::format("column '{}' is NULL", n.request_id);
  if (id.text.empty()) return fmt::format("column '{}' is empty", n.request_id);
  row.request_id = scheme.trim_skus ? std::string(trim_white_space(id.text)) : id.text;
  std::string problem = validate_request_id(row.request_id);
  return problem.empty() ? problem : fmt::format("column '{}': {}", n.request_id, problem);
}

}  // namespace stockctl
