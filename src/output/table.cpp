#include "output/table.h"

#include <algorithm>

#include "base/text.h"

namespace stockctl {
namespace {

TableCell cell_of(const nlohmann::ordered_json& v) {
  if (v.is_null()) return {kTableNull, false};
  if (v.is_number()) return {v.dump(), true};
  if (v.is_boolean()) return {v.get<bool>() ? "true" : "false", false};
  if (v.is_string()) return {escape_control(v.get_ref<const std::string&>()), false};
  return {escape_control(v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)),
          false};
}

void flatten(const std::string& name, const nlohmann::ordered_json& v, TableRow& row) {
  if (!v.is_object() || (v.empty() && !name.empty())) {
    row.emplace_back(name.empty() ? "value" : name, cell_of(v.is_object() ? nullptr : v));
    return;
  }
  for (const auto& [key, value] : v.items()) {
    std::string nested = name;
    if (!nested.empty()) nested += '.';
    nested += key;
    flatten(nested, value, row);
  }
}

bool is_null(const TableCell& cell) { return !cell.number && cell.text == kTableNull; }

const TableCell* find_cell(const TableRow& row, const std::string& name) {
  for (const auto& [key, cell] : row) {
    if (key == name) return &cell;
  }
  return nullptr;
}

// `text` padded with spaces to `width`: on the left for a number, on the right for text.
void append_aligned(std::string& line, const std::string& text, std::size_t width, bool right) {
  const std::size_t pad = width - std::min(width, display_width(text));
  if (right) line.append(pad, ' ');
  line += text;
  if (!right) line.append(pad, ' ');
}

void end_line(std::string& out, std::string& line) {
  line.erase(line.find_last_not_of(' ') + 1);
  out += line;
  out += '\n';
  line.clear();
}

}  // namespace

TableRow table_row(const nlohmann::ordered_json& value) {
  TableRow row;
  flatten("", value, row);
  return row;
}

std::vector<TableRow> table_rows(const nlohmann::ordered_json& value) {
  if (value.is_object()) {
    for (const auto& [key, field] : value.items()) {
      const bool objects =
          field.is_array() && !field.empty() &&
          std::all_of(field.begin(), field.end(), [](const auto& e) { return e.is_object(); });
      if (!objects) continue;
      std::vector<TableRow> rows;
      rows.reserve(field.size());
      nlohmann::ordered_json one = value;
      for (const nlohmann::ordered_json& element : field) {
        one[key] = element;
        rows.push_back(table_row(one));
      }
      return rows;
    }
  }
  return {table_row(value)};
}

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string TableBlocks::add(TableRow row) {
  rows_.push_back(std::move(row));
  return rows_.size() >= block_rows_ ? flush() : std::string();
}

std::string TableBlocks::flush() {
  if (rows_.empty()) return {};
  std::vector<Column> layout = layout_for_block();
  std::string text = render(layout);
  printed_ = std::move(layout);
  rows_.clear();
  return text;
}

std::vector<TableBlocks::Column> TableBlocks::layout_for_block() const {
  std::vector<Column> columns = printed_;
  auto position = [&columns](const std::string& name) {
    return std::find_if(columns.begin(), columns.end(),
                        [&name](const Column& c) { return c.name == name; });
  };
  for (const TableRow& row : rows_) {
    // A name not seen before goes right before the name that follows it in its row, or last
    // when none does: a field that only some rows have (an error message) keeps its place
    // among the others, and one that ends its row ends the table.
    auto before = columns.end();
    for (auto field = row.rbegin(); field != row.rend(); ++field) {
      auto at = position(field->first);
      if (at == columns.end()) {
        at = columns.insert(before, Column{field->first, display_width(field->first), true});
      }
      before = at;
    }
  }
  for (Column& column : columns) {
    for (const TableRow& row : rows_) {
      const TableCell* cell = find_cell(row, column.name);
      if (!cell) continue;
      column.width = std::max(column.width, display_width(cell->text));
      if (!cell->number && !is_null(*cell)) column.number = false;
    }
  }
  return columns;
}

std::string TableBlocks::render(const std::vector<Column>& layout) const {
  std::string out;
  std::string line;
  auto same = [](const Column& a, const Column& b) {
    return a.name == b.name && a.width == b.width && a.number == b.number;
  };
  const bool changed = layout.size() != printed_.size() ||
                       !std::equal(layout.begin(), layout.end(), printed_.begin(), same);
  if (changed) {
    if (!printed_.empty()) out += '\n';
    for (std::size_t i = 0; i < layout.size(); ++i) {
      if (i > 0) line += "  ";
      append_aligned(line, layout[i].name, layout[i].width, layout[i].number);
    }
    end_line(out, line);
  }
  for (const TableRow& row : rows_) {
    for (std::size_t i = 0; i < layout.size(); ++i) {
      if (i > 0) line += "  ";
      const TableCell* cell = find_cell(row, layout[i].name);
      append_aligned(line, cell ? cell->text : kTableNull, layout[i].width, layout[i].number);
    }
    end_line(out, line);
  }
  return out;
}

std::string render_fields(const TableRow& row) {
  // Numbers line up with each other, right-aligned to the widest number: a long text beside
  // them (a file's path, an error) would otherwise push every count far to the right.
  std::size_t name_width = 0;
  std::size_t number_width = 0;
  for (const auto& [name, cell] : row) {
    name_width = std::max(name_width, display_width(name));
    if (cell.number) number_width = std::max(number_width, display_width(cell.text));
  }
  std::string out;
  std::string line;
  for (const auto& [name, cell] : row) {
    append_aligned(line, name, name_width, false);
    line += "  ";
    append_aligned(line, cell.text, cell.number ? number_width : 0, cell.number);
    end_line(out, line);
  }
  return out;
}

}  // namespace stockctl
