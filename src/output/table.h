#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace stockctl {

/// One cell of a table: the text shown, and whether it is a number (numbers are right-aligned).
struct TableCell {
  std::string text;
  bool number = false;
};

/// A row of named cells, in the order of the JSON object it was made of.
using TableRow = std::vector<std::pair<std::string, TableCell>>;

/// What a missing or null value shows in a table.
inline constexpr const char* kTableNull = "-";

/// A JSON object as a row: nested objects become "parent.child" columns, arrays their compact
/// JSON text, null "-", booleans true/false, and control characters in text are escaped so that
/// a row stays on one line. A value that is not an object is one column named "value".
TableRow table_row(const nlohmann::ordered_json& value);

/// A JSON object as the rows a person reads: table_row's one row, or, when a field holds an
/// array of objects (a hold's or order's lines), a row per element, whose fields are
/// "field.child" columns in the array's place, the object's other fields repeated on each.
std::vector<TableRow> table_rows(const nlohmann::ordered_json& value);

/// The width a terminal gives `text`: its code points (UTF-8 continuation bytes take none).
std::size_t display_width(const std::string& text);

/// Lays rows out in aligned columns, a block at a time, so that memory holds one block of rows
/// however many there are. Columns are the union of the rows' names in the order first seen;
/// a row lacking one shows "-". Widths only grow from block to block: the header is printed
/// before the first block and again (after a blank line) only when a block needs new columns,
/// wider ones or another alignment. Numbers are right-aligned (a column whose every value is a
/// number or "-"), text left-aligned, two spaces between columns, no trailing spaces.
class TableBlocks {
 public:
  explicit TableBlocks(std::size_t block_rows = 1000) : block_rows_(block_rows) {}

  /// Buffers `row`; returns the text of the block when this row filled it, else "".
  std::string add(TableRow row);
  /// The text of the rows buffered so far ("" when none); the next block compares its layout
  /// with the one printed last.
  std::string flush();

 private:
  struct Column {
    std::string name;
    std::size_t width = 0;
    bool number = true;
  };
  std::vector<Column> layout_for_block() const;
  std::string render(const std::vector<Column>& layout) const;

  std::size_t block_rows_;
  std::vector<TableRow> rows_;
  std::vector<Column> printed_;  ///< the layout of the last block printed
};

/// A single object (a summary) as a two-column table, one line per field: the name, then the
/// value (numbers right-aligned to the widest number, text left-aligned), no trailing spaces.
std::string render_fields(const TableRow& row);

}  // namespace stockctl
