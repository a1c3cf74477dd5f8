#pragma once

// Shared body of the source-parser fuzz targets: parse arbitrary bytes as one format and check
// what every reader promises, whatever the input.

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "sources/open_source.h"
#include "sources/rows.h"

namespace stockctl::fuzz {

inline void check(bool ok) {
  if (!ok) std::abort();
}

inline int parse_source(const std::uint8_t* data, std::size_t size, Format format) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  const SourceColumns names;
  const KeyScheme scheme;
  const WantedColumns wanted = stock_columns(names);
  std::size_t last_line = 0;
  bool saw_fatal = false;
  RecordHandler handler{
      [&](const std::vector<bool>& present) {
        check(present.size() == wanted.size());
        return check_stock_header(present, names);
      },
      [&](Record& record) {
        check(!saw_fatal);                // nothing after a fatal error
        check(record.line >= 1);          // lines count from 1
        check(record.line >= last_line);  // and never go back
        last_line = record.line;
        saw_fatal = record.fatal;
        if (record.fatal) check(!record.error.empty());
        if (!record.fatal) check(record.fields.size() == wanted.size());
        StockRow row;
        if (!record.fatal && interpret_stock_row(record, names, scheme, row).empty()) {
          check(validate_sku(row.sku, scheme).empty());
          check(row.value >= -1);
        }
        return true;
      }};
  read_records(in, format, wanted, handler);
  return 0;
}

}  // namespace stockctl::fuzz
