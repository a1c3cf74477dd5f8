#include "sources/json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/text.h"

namespace stockctl {
namespace {

using json = nlohmann::json;

// Deeper nesting than this cannot be a row of ours; refusing it bounds the parser's work.
constexpr std::size_t kMaxDepth = 32;

// The keys of one row object. A key twice would let its last value win without a word, where a
// CSV header with a column twice is refused: {"sku": "D1", "stock": 5, "stock": 6}.
class RowKeys {
 public:
  void clear() {
    seen_.clear();
    repeated_.clear();
  }
  void add(const std::string& key) {
    if (!repeated_.empty()) return;
    if (std::find(seen_.begin(), seen_.end(), key) != seen_.end()) {
      repeated_ = key;
    } else {
      seen_.push_back(key);
    }
  }
  /// "key 'stock' appears twice", or "" when no key was.
  std::string problem() const {
    return repeated_.empty() ? std::string() : fmt::format("key '{}' appears twice", repeated_);
  }

 private:
  std::vector<std::string> seen_;
  std::string repeated_;
};
// column_ value meaning "the value of a map entry".
constexpr int kMapValue = -2;

int wanted_index(const WantedColumns& wanted, std::string_view name) {
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    if (same_name_ignoring_case(wanted[i], name)) return static_cast<int>(i);
  }
  return -1;
}

// An input iterator over a stream that counts the line breaks it has passed, so that SAX
// events can be given the line they happened on.
class LineCountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  LineCountingIterator() = default;
  LineCountingIterator(std::streambuf* buf, std::size_t* newlines)
      : buf_(buf), newlines_(newlines) {
    fetch();
  }
  const char& operator*() const { return current_; }
  LineCountingIterator& operator++() {
    if (current_ == '\n') ++*newlines_;
    buf_->sbumpc();
    fetch();
    return *this;
  }
  LineCountingIterator operator++(int) {
    LineCountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const LineCountingIterator& other) const { return at_end() == other.at_end(); }
  bool operator!=(const LineCountingIterator& other) const { return !(*this == other); }

 private:
  bool at_end() const { return buf_ == nullptr; }
  void fetch() {
    auto c = buf_->sgetc();
    if (c == std::char_traits<char>::eof()) {
      buf_ = nullptr;
    } else {
      current_ = std::char_traits<char>::to_char_type(c);
    }
  }
  std::streambuf* buf_ = nullptr;
  std::size_t* newlines_ = nullptr;
  char current_ = 0;
};

// Text of a scalar JSON value as a source cell; non-integers keep their spelling so that the
// number parser can say what is wrong with them.
Field field_of(const json& v) {
  Field f;
  f.present = true;
  if (v.is_null()) {
    f.null = true;
  } else if (v.is_string()) {
    f.text = v.get<std::string>();
  } else if (v.is_structured()) {
    f.text = v.is_object() ? "<object>" : "<array>";
  } else {
    f.text = v.dump();
  }
  return f;
}

// Builds rows from SAX events. depth 0 is outside the document; the top-level container is
// depth 1; a row's own columns are at depth 2.
class RowSax : public json::json_sax_t {
 public:
  RowSax(const WantedColumns& wanted, const RecordHandler& handler, const std::size_t* newlines)
      : wanted_(wanted), handler_(handler), newlines_(newlines) {}

  bool null() override { return scalar(json(nullptr)); }
  bool boolean(bool v) override { return scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(json(v)); }
  bool number_float(number_float_t, const string_t& s) override {
    // Keeps the spelling ("1.50", "1e3") so that the number check can quote it.
    Field f;
    f.present = true;
    f.text = s;
    return scalar_field(f, "a number");
  }
  bool string(string_t& v) override { return scalar(json(v)); }
  bool binary(binary_t&) override { return scalar(json("<binary>")); }

  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    if (depth_ == 1 && map_) {
      if (is_column_name(k)) {
        return fail(fmt::format("'{}' looks like a column name, not a SKU: {}", k, expected()));
      }
      begin_row();
      record_.sku_key = k;
      record_.keyed = true;
      column_ = kMapValue;
    } else if (depth_ == 2) {
      column_ = wanted_index(wanted_, k);
      row_keys_.add(k);
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    fail(fmt::format("invalid JSON: {}", strip_prefix(e.what())));
    return false;
  }

  bool stopped() const { return stopped_; }

 private:
  bool open(bool object) {
    ++depth_;
    if (depth_ > kMaxDepth) return fail("JSON nested too deeply");
    if (depth_ == 1) {
      map_ = object;
      return true;
    }
    if (depth_ == 2 && !map_) {
      begin_row();
      if (!object) record_.error = "an array element is not an object";
      return true;
    }
    if (depth_ == 2 && map_) {
      return fail(fmt::format("the value of '{}' is {}, not a number: {}", record_.sku_key,
                              object ? "an object" : "an array", expected()));
    }
    return assign(field_of(object ? json::object() : json::array()));
  }

  bool close() {
    --depth_;
    if (depth_ == 1 && !map_) return end_row();  // an element of the top-level array
    return true;
  }

  bool scalar(const json& v) { return scalar_field(field_of(v), kind_of(v)); }

  // `kind` names the JSON type of the value ("a number", "a string", ...), for messages.
  bool scalar_field(const Field& f, std::string_view kind) {
    if (depth_ == 0) return fail(fmt::format("the source is a single value: {}", expected()));
    if (depth_ == 1 && !map_) {
      begin_row();
      record_.error = "an array element is not an object";
      return end_row();
    }
    if (depth_ == 1 && map_) {
      // Only a number (or the word for -1) can be a stock or quantity: anything else means the
      // object is something other than a map, such as one row ({"sku": "x", "stock": 5}).
      if (kind != "a number" && !(f.text == "unlimited" && !f.null)) {
        return fail(fmt::format("the value of '{}' is {}, not a number: {}", record_.sku_key, kind,
                                expected()));
      }
      return assign(f) && end_row();
    }
    return assign(f);
  }

  static std::string_view kind_of(const json& v) {
    if (v.is_number()) return "a number";
    if (v.is_string()) return "a string";
    if (v.is_null()) return "null";
    if (v.is_boolean()) return "a boolean";
    return "binary data";
  }

  bool is_column_name(std::string_view key) const {
    static const char* const kColumnNames[] = {"sku",    "stock", "total",
                                               "issued", "qty",   "request_id"};
    if (wanted_index(wanted_, key) >= 0) return true;
    return std::any_of(std::begin(kColumnNames), std::end(kColumnNames),
                       [key](const char* name) { return same_name_ignoring_case(name, key); });
  }

  // The two shapes a JSON source may have, in the caller's column names.
  std::string expected() const {
    const std::string& sku = wanted_.empty() ? std::string("sku") : wanted_[0];
    const std::string value = wanted_.size() > 1 ? wanted_[1] : std::string("stock");
    return fmt::format(
        "expected an array of objects ([{{\"{0}\": \"A1\", \"{1}\": 5}}, ...]) or an object "
        "mapping SKU to {1} ({{\"A1\": 5, ...}})",
        sku, value);
  }

  bool assign(const Field& f) {
    // In {"sku": 100} the bare value fills the second wanted column (stock, or qty).
    int col = (column_ == kMapValue || (depth_ == 1 && map_)) ? 1 : column_;
    if (col >= 0 && col < static_cast<int>(record_.fields.size()) && depth_ <= 2) {
      record_.fields[col] = f;
    }
    return true;
  }

  void begin_row() {
    row_keys_.clear();
    record_ = Record{};
    record_.line = *newlines_ + 1;
    record_.fields.assign(wanted_.size(), Field{});
    in_row_ = true;
  }

  bool end_row() {
    in_row_ = false;
    if (record_.error.empty()) record_.error = row_keys_.problem();
    if (!handler_.record(record_)) {
      stopped_ = true;
      return false;
    }
    return true;
  }

  bool fail(std::string message) {
    Record r;
    r.line = *newlines_ + 1;
    r.error = std::move(message);
    r.fatal = true;
    handler_.record(r);
    stopped_ = true;
    return false;
  }

  static std::string strip_prefix(const std::string& what) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5: ..." -> after ": "
    auto pos = what.find(": ");
    return pos == std::string::npos ? what : what.substr(pos + 2);
  }

  const WantedColumns& wanted_;
  const RecordHandler& handler_;
  const std::size_t* newlines_;
  Record record_;
  std::size_t depth_ = 0;
  bool map_ = false;
  bool in_row_ = false;
  bool stopped_ = false;
  int column_ = -1;
  RowKeys row_keys_;  ///< the keys of the row object read so far
};

}  // namespace

void read_json(std::istream& in, const WantedColumns& wanted, const RecordHandler& handler) {
  std::size_t newlines = 0;
  RowSax sax(wanted, handler, &newlines);
  LineCountingIterator first(in.rdbuf(), &newlines), last;
  if (first == last) {
    Record r;
    r.line = 1;
    r.error = "the source is empty";
    r.fatal = true;
    handler.record(r);
    return;
  }
  json::sax_parse(first, last, &sax, nlohmann::detail::input_format_t::json, true, true);
}

void read_ndjson(std::istream& in, const WantedColumns& wanted, const RecordHandler& handler) {
  std::string line;
  std::size_t line_no = 0;
  bool any = false;
  Record record;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    any = true;
    record = Record{};
    record.line = line_no;
    record.fields.assign(wanted.size(), Field{});
    RowKeys keys;
    const json::parser_callback_t note_keys = [&keys](int depth, json::parse_event_t event,
                                                      json& parsed) {
      if (event == json::parse_event_t::key && depth == 1) {
        keys.add(parsed.get_ref<const std::string&>());
      }
      return true;
    };
    json row = json::parse(line, note_keys, false);
    if (row.is_discarded()) {
      record.error = "invalid JSON on this line";
    } else if (!keys.problem().empty()) {
      record.error = keys.problem();
    } else if (!row.is_object()) {
      record.error = "the line is not a JSON object";
    } else {
      for (auto it = row.begin(); it != row.end(); ++it) {
        int col = wanted_index(wanted, it.key());
        if (col >= 0) record.fields[col] = field_of(it.value());
      }
    }
    if (!handler.record(record)) return;
  }
  if (!any) {
    // As an empty CSV or JSON source: a dump that failed before its first row is not a source
    // with no items (rebuild would then find every item "extra").
    record = Record{};
    record.line = 1;
    record.error = "the source is empty";
    record.fatal = true;
    handler.record(record);
  }
}

}  // namespace stockctl
