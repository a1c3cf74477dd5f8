#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace stockctl {

/// One cell of a source row: absent (no such column), null (TSV NULL / JSON null), or text.
struct Field {
  bool present = false;
  bool null = false;
  std::string text;
};

/// One row of a source, with the columns the caller asked for, in the order asked.
struct Record {
  std::size_t line = 0;       ///< physical line where the row starts; the header is line 1
  std::vector<Field> fields;  ///< one per wanted column
  std::string sku_key;        ///< JSON object map: the key the row was found under
  bool keyed = false;         ///< the row came from a JSON object map (sku_key is its SKU)
  std::string error;          ///< why the row could not be read ("" when it could)
  bool fatal = false;         ///< the source cannot be read past this point
};

/// Receives what a reader finds. `header` gets which wanted columns exist and returns an error
/// ("" when fine); `record` gets each row and returns false to stop reading.
struct RecordHandler {
  std::function<std::string(const std::vector<bool>& present)> header;
  std::function<bool(Record&)> record;
};

/// Which columns a reader extracts, by name (matched case-insensitively).
using WantedColumns = std::vector<std::string>;

}  // namespace stockctl
