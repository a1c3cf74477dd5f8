#include "sources/delimited.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/text.h"

namespace stockctl {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

std::string trim_name(std::string name) {
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  std::size_t start = 0;
  while (start < name.size() && std::isspace(static_cast<unsigned char>(name[start]))) ++start;
  return name.substr(start);
}

// Maps each wanted column to its index in the header, or -1.
std::vector<int> map_columns(const std::vector<std::string>& header, const WantedColumns& wanted) {
  std::vector<int> index(wanted.size(), -1);
  for (std::size_t w = 0; w < wanted.size(); ++w) {
    for (std::size_t h = 0; h < header.size(); ++h) {
      if (same_name_ignoring_case(trim_name(header[h]), wanted[w])) {
        index[w] = static_cast<int>(h);
        break;
      }
    }
  }
  return index;
}

// Reads physical lines from a stream's buffer in large blocks and hands each out as a view, found
// with memchr: std::getline's per-character sentry and copy cost more than the rest of a plain
// row's validation. A view stays valid until the next call.
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(in), buf_(kBlock) {}

  // The next line, without its '\n' or a trailing '\r' (`crlf` says whether there was one).
  // False at end of input.
  bool next(std::string_view& line, bool& crlf) {
    for (;;) {
      const char* start = buf_.data() + begin_;
      // Only what was read since the last search: a line of many blocks is searched once, not
      // once per block.
      if (const void* nl = std::memchr(start + searched_, '\n', end_ - begin_ - searched_)) {
        std::size_t len = static_cast<const char*>(nl) - start;
        begin_ += len + 1;
        searched_ = 0;
        return finish(line, crlf, start, len);
      }
      searched_ = end_ - begin_;
      if (eof_) {
        if (begin_ == end_) return false;
        std::size_t len = end_ - begin_;  // a last line without '\n'
        begin_ = end_;
        searched_ = 0;
        return finish(line, crlf, start, len);
      }
      fill();
    }
  }

  bool next(std::string_view& line) {
    bool crlf = false;
    return next(line, crlf);
  }

 private:
  static constexpr std::size_t kBlock = 1 << 16;

  static bool finish(std::string_view& line, bool& crlf, const char* start, std::size_t len) {
    crlf = len > 0 && start[len - 1] == '\r';
    line = std::string_view(start, crlf ? len - 1 : len);
    return true;
  }

  // Keeps the unfinished line at the front and reads another block behind it. A read error ends
  // the input with the stream's badbit set, as std::getline would leave it, so that the caller
  // reports it with the source's name.
  void fill() {
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (buf_.size() - end_ < kBlock) buf_.resize(end_ + kBlock);  // a line longer than a block
    std::streamsize got = 0;
    try {
      got =
          in_.rdbuf()->sgetn(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
    } catch (const std::ios_base::failure&) {
      in_.setstate(std::ios::badbit);
      got = 0;
    }
    if (got <= 0) {
      eof_ = true;
      in_.setstate(std::ios::eofbit);
      return;
    }
    end_ += static_cast<std::size_t>(got);
  }

  std::istream& in_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  std::size_t searched_ = 0;  ///< bytes from begin_ known to hold no '\n'
  bool eof_ = false;
};

// The next cell of `out` to fill, cleared; cells keep their capacity from row to row, so a
// steady stream of rows allocates nothing.
std::string& next_cell(std::vector<std::string>& out, std::size_t& n) {
  if (n == out.size()) out.emplace_back();
  std::string& cell = out[n++];
  cell.clear();
  return cell;
}

// One record's cells as views: into the line itself when nothing had to be unquoted (the
// common case, copied only once, into the record's fields), else into `owned`. Valid until the
// next line is read.
struct Cells {
  std::vector<std::string_view> views;
  std::vector<std::string> owned;

  std::vector<std::string> copy() const { return {views.begin(), views.end()}; }
};

// Splits `line` at each `sep` into views of it, with memchr instead of per character.
void split_views(std::string_view line, char sep, std::vector<std::string_view>& out) {
  out.clear();
  for (;;) {
    auto at = line.find(sep);
    out.push_back(line.substr(0, at));
    if (at == std::string_view::npos) return;
    line.remove_prefix(at + 1);
  }
}

// Splits one CSV record, reading more physical lines while a quoted field stays open.
// Returns false at end of input; sets `error` on a malformed record.
bool next_csv_record(LineReader& in, std::size_t& line_no, Cells& cells, std::size_t& start_line,
                     std::string& error, char delimiter) {
  bool crlf = false;
  std::string_view line;
  do {
    if (!in.next(line, crlf)) return false;
    ++line_no;
    if (line_no == 1 && line.substr(0, kBom.size()) == kBom) line.remove_prefix(kBom.size());
  } while (line.empty());
  start_line = line_no;
  error.clear();
  if (line.find('"') == std::string_view::npos) {
    split_views(line, delimiter, cells.views);
    return true;
  }
  std::vector<std::string>& out = cells.owned;
  std::size_t n = 0;
  std::string field;
  bool quoted = false, was_quoted = false;
  std::size_t i = 0;
  for (;;) {
    if (i == line.size()) {
      if (!quoted) break;
      // A line break inside quotes belongs to the field, as written; the record goes on.
      field.append(crlf ? "\r\n" : "\n");
      if (!in.next(line, crlf)) {
        error = fmt::format("unterminated quoted field (opened on line {})", start_line);
        break;
      }
      ++line_no;
      i = 0;
      continue;
    }
    char c = line[i++];
    if (quoted) {
      if (c != '"') {
        field.push_back(c);
      } else if (i < line.size() && line[i] == '"') {
        field.push_back('"');
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == delimiter) {
      next_cell(out, n).swap(field);
      field.clear();
      was_quoted = false;
    } else if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == '"' || was_quoted) {
      if (error.empty()) {
        error = fmt::format("stray '\"' or text after a closing quote in field {}", n + 1);
      }
    } else {
      field.push_back(c);
    }
  }
  next_cell(out, n).swap(field);
  out.resize(n);
  cells.views.assign(out.begin(), out.end());
  return true;
}

std::string unescape_tsv(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\' || i + 1 == raw.size()) {
      out.push_back(raw[i]);
      continue;
    }
    char next = raw[++i];
    switch (next) {
      case 't':
        out.push_back('\t');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case '0':
        out.push_back('\0');
        break;
      case 'b':
        out.push_back('\b');
        break;
      default:
        out.push_back(next);
        break;  // "\\" and any other escaped character
    }
  }
  return out;
}

std::vector<bool> present_columns(const std::vector<int>& index) {
  std::vector<bool> present;
  present.reserve(index.size());
  for (int i : index) present.push_back(i >= 0);
  return present;
}

// Fills `record.fields` from split cells; `tsv` turns NULL / \N into null and unescapes.
void fill_fields(Record& record, const std::vector<std::string_view>& cells,
                 const std::vector<int>& index, bool tsv) {
  record.fields.resize(index.size());
  for (std::size_t w = 0; w < index.size(); ++w) {
    Field& f = record.fields[w];
    f.present = f.null = false;
    f.text.clear();  // keeps its capacity for the next row
    if (index[w] < 0) continue;
    if (static_cast<std::size_t>(index[w]) >= cells.size()) continue;  // short row: absent
    f.present = true;
    std::string_view cell = cells[index[w]];
    if (tsv && (cell == "NULL" || cell == "\\N")) {
      f.null = true;
    } else {
      if (tsv) {
        f.text = unescape_tsv(cell);
      } else {
        f.text.assign(cell.data(), cell.size());
      }
    }
  }
}

// Names a column that the header holds twice (compared as columns are matched: trimmed and
// case-insensitively), or "": with two, which one a row's value came from would be a guess.
std::string repeated_column(const std::vector<std::string>& header) {
  std::vector<std::pair<std::string, std::size_t>> names;
  names.reserve(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) {
    std::string name = trim_name(header[i]);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    names.emplace_back(std::move(name), i);
  }
  std::sort(names.begin(), names.end());
  for (std::size_t i = 1; i < names.size(); ++i) {
    if (names[i].first == names[i - 1].first) {
      return fmt::format("the header names column '{}' twice (columns {} and {})",
                         trim_name(header[names[i - 1].second]), names[i - 1].second + 1,
                         names[i].second + 1);
    }
  }
  return {};
}

// Why a record with `fields` fields does not fit a header of `expected` columns, or "".
std::string field_count_problem(std::size_t fields, std::size_t expected, std::string_view hint) {
  if (fields == expected) return {};
  return fmt::format("{} field{} but the header has {}{}", fields, fields == 1 ? "" : "s", expected,
                     fields > expected ? hint : "");
}

void report_fatal(const RecordHandler& handler, std::size_t line, std::string message) {
  Record r;
  r.line = line;
  r.error = std::move(message);
  r.fatal = true;
  handler.record(r);
}

// How a display of `c` reads in a message: a tab is not visible.
std::string shown_character(char c) { return c == '\t' ? "tab" : fmt::format("'{}'", c); }

// What a CSV header without the SKU column was split into, and the --delimiter it may need:
// a European spreadsheet's `sku;stock` read at ',' is one column named "sku;stock".
std::string csv_header_context(const std::vector<std::string>& header, char delimiter) {
  std::string joined;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i > 0) joined += delimiter;
    joined += header[i];
  }
  std::string context =
      fmt::format(" (fields split at {}: {} field{}, {})", shown_character(delimiter),
                  header.size(), header.size() == 1 ? "" : "s", quote_value(joined));
  for (char other : {';', '|', '\t', ','}) {
    if (other == delimiter || joined.find(other) == std::string::npos) continue;
    context += other == '\t' ? "; for tab-separated files use --format tsv"
                             : fmt::format("; try --delimiter '{}'", other);
    break;
  }
  return context;
}

bool start_header(const std::vector<std::string>& header, std::size_t line,
                  const WantedColumns& wanted, const RecordHandler& handler,
                  std::vector<int>& index, const char* delimiter = nullptr) {
  index = map_columns(header, wanted);
  std::string problem = repeated_column(header);
  if (problem.empty() && handler.header) {
    problem = handler.header(present_columns(index));
    if (!problem.empty() && delimiter && !index.empty() && index[0] < 0) {
      problem += csv_header_context(header, *delimiter);
    }
  }
  if (problem.empty()) return true;
  report_fatal(handler, line, problem);
  return false;
}

void report_empty(const RecordHandler& handler) {
  report_fatal(handler, 1, "no header row: the source is empty");
}

}  // namespace

void read_csv(std::istream& in, const WantedColumns& wanted, const RecordHandler& handler,
              char delimiter) {
  LineReader lines(in);
  std::size_t line_no = 0, start = 0;
  Cells cells;
  std::string error;
  if (!next_csv_record(lines, line_no, cells, start, error, delimiter)) {
    return report_empty(handler);
  }
  if (!error.empty()) return report_fatal(handler, start, "header row: " + error);
  std::vector<int> index;
  if (!start_header(cells.copy(), start, wanted, handler, index, &delimiter)) return;
  const std::size_t columns = cells.views.size();
  Record record;
  while (next_csv_record(lines, line_no, cells, start, error, delimiter)) {
    record.line = start;
    record.fatal = !error.empty() && error.rfind("unterminated", 0) == 0;
    record.error = !error.empty() ? error
                                  : field_count_problem(cells.views.size(), columns,
                                                        " (quote a value that holds a comma)");
    fill_fields(record, cells.views, index, false);
    if (!handler.record(record) || record.fatal) return;
  }
}

void read_tsv(std::istream& in, const WantedColumns& wanted, const RecordHandler& handler) {
  LineReader lines(in);
  std::size_t line_no = 0;
  std::string_view line;
  Cells cells;
  while (lines.next(line)) {
    ++line_no;
    if (line_no == 1 && line.substr(0, kBom.size()) == kBom) line.remove_prefix(kBom.size());
    if (!line.empty()) break;
  }
  if (line_no == 0 || line.empty()) return report_empty(handler);
  split_views(line, '\t', cells.views);
  std::vector<int> index;
  if (!start_header(cells.copy(), line_no, wanted, handler, index)) return;
  const std::size_t columns = cells.views.size();
  Record record;
  while (lines.next(line)) {
    ++line_no;
    if (line.empty()) continue;
    split_views(line, '\t', cells.views);
    record.line = line_no;
    record.error =
        field_count_problem(cells.views.size(), columns, " (escape a tab in a value as \\t)");
    fill_fields(record, cells.views, index, true);
    if (!handler.record(record)) return;
  }
}

}  // namespace stockctl
