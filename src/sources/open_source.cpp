#include "sources/open_source.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <streambuf>
#include <string_view>

#include "base/errors.h"
#include "base/text.h"
#include "proc/from_cmd.h"
#include "sources/delimited.h"
#include "sources/json.h"

namespace stockctl {
namespace {

// Whether `path` ends in `extension`, in any ASCII case: a spreadsheet on Windows saves
// `STOCK.CSV`, and `.Json` is the same format.
bool has_extension(const std::string& path, std::string_view extension) {
  return path.size() >= extension.size() &&
         same_name_ignoring_case(std::string_view(path).substr(path.size() - extension.size()),
                                 extension);
}

// A read-only streambuf over a C FILE*, so the spool file can be parsed like any stream.
class FileBuf : public std::streambuf {
 public:
  explicit FileBuf(std::FILE* f) : file_(f) {}

 protected:
  int_type underflow() override {
    std::size_t n = std::fread(buf_, 1, sizeof buf_, file_);
    if (n == 0) return traits_type::eof();
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  std::FILE* file_;
  char buf_[1 << 16];
};

// Copies what it reads from standard input into the spool file as a side effect.
class TeeBuf : public std::streambuf {
 public:
  TeeBuf(std::streambuf* in, std::FILE* copy) : in_(in), copy_(copy) {}
  bool failed() const { return failed_; }

 protected:
  int_type underflow() override {
    std::streamsize n = in_->sgetn(buf_, sizeof buf_);
    if (n <= 0) return traits_type::eof();
    if (std::fwrite(buf_, 1, static_cast<std::size_t>(n), copy_) != static_cast<std::size_t>(n)) {
      failed_ = true;
    }
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  std::streambuf* in_;
  std::FILE* copy_;
  bool failed_ = false;
  char buf_[1 << 16];
};

}  // namespace

std::optional<Format> parse_format(const std::string& name) {
  if (name == "csv") return Format::csv;
  if (name == "tsv") return Format::tsv;
  if (name == "json") return Format::json;
  if (name == "ndjson" || name == "jsonl") return Format::ndjson;
  return std::nullopt;
}

std::optional<Format> format_from_extension(const std::string& path) {
  if (has_extension(path, ".csv")) return Format::csv;
  if (has_extension(path, ".tsv")) return Format::tsv;
  if (has_extension(path, ".json")) return Format::json;
  if (has_extension(path, ".ndjson") || has_extension(path, ".jsonl")) return Format::ndjson;
  return std::nullopt;
}

void read_records(std::istream& in, Format format, const WantedColumns& wanted,
                  const RecordHandler& handler, char delimiter) {
  switch (format) {
    case Format::csv:
      return read_csv(in, wanted, handler, delimiter);
    case Format::tsv:
      return read_tsv(in, wanted, handler);
    case Format::json:
      return read_json(in, wanted, handler);
    case Format::ndjson:
      return read_ndjson(in, wanted, handler);
  }
}

Source::Source(std::string path, std::optional<Format> format, char delimiter)
    : path_(std::move(path)), name_(path_ == "-" ? "<stdin>" : path_), delimiter_(delimiter) {
  struct stat st {};
  const bool found = path_ != "-" && stat(path_.c_str(), &st) == 0;
  // Said before the format, which a directory's name cannot tell either.
  if (found && S_ISDIR(st.st_mode)) {
    throw IoError(fmt::format("cannot read {}: it is a directory", name_));
  }
  if (!format) format = format_from_extension(path_);
  if (!format) {
    throw InputError(
        fmt::format("{}: cannot tell the format from the name; use --format "
                    "csv|tsv|json|ndjson",
                    name_));
  }
  format_ = *format;
  check_delimiter();
  if (path_ != "-") {
    // A FIFO is opened once, by the first read: a probe would wait for its writer, and a
    // second open would find what the first read consumed gone.
    once_ = found && !S_ISREG(st.st_mode);
    if (once_) return;
    std::ifstream probe(path_);
    if (!probe) throw IoError(fmt::format("cannot open {}: {}", name_, std::strerror(errno)));
  }
}

Source::Source(SourceCommand command, std::optional<Format> format, char delimiter)
    : name_("<from-cmd>"),
      format_(format.value_or(Format::csv)),
      delimiter_(delimiter),
      command_(std::move(command)) {
  check_delimiter();
}

void Source::check_delimiter() const {
  if (delimiter_ == ',' || format_ == Format::csv) return;
  throw InputError(fmt::format("{}: --delimiter applies to CSV only, and this source is read as {}",
                               name_, format_ == Format::tsv ? "TSV (tab separated)" : "JSON"));
}

Source::~Source() {
  if (spool_) std::fclose(spool_);
}

void Source::read(const WantedColumns& wanted, const RecordHandler& handler) {
  if (spooled_) {
    std::rewind(spool_);
    FileBuf buf(spool_);
    std::istream in(&buf);
    read_records(in, format_, wanted, handler, delimiter_);
    return;
  }
  if (command_) return read_command(wanted, handler);
  if (path_ == "-") return spool(*std::cin.rdbuf(), wanted, handler);
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw IoError(fmt::format("cannot open {}: {}", name_, std::strerror(errno)));
  if (once_) return spool(*in.rdbuf(), wanted, handler);
  read_records(in, format_, wanted, handler, delimiter_);
  if (in.bad()) throw IoError(fmt::format("error reading {}", name_));
}

void Source::spool(std::streambuf& input, const WantedColumns& wanted,
                   const RecordHandler& handler) {
  const std::string what = command_       ? "the command's output"
                           : path_ == "-" ? "standard input"
                                          : name_;
  spool_ = std::tmpfile();
  if (!spool_) {
    throw IoError(
        fmt::format("cannot create a temporary file for {}: {}", what, std::strerror(errno)));
  }
  TeeBuf tee(&input, spool_);
  std::istream in(&tee);
  read_records(in, format_, wanted, handler, delimiter_);
  // Drain what the parser did not consume, so the spool holds all of the input.
  in.ignore(std::numeric_limits<std::streamsize>::max());
  if (tee.failed() || std::fflush(spool_) != 0) {
    throw IoError(
        fmt::format("cannot spool {} to a temporary file: {}", what, std::strerror(errno)));
  }
  spooled_ = true;
}

void Source::read_command(const WantedColumns& wanted, const RecordHandler& handler) {
  std::unique_ptr<CommandOutput> output;
  try {
    output = std::make_unique<CommandOutput>(command_->command, command_->timeout);
  } catch (const std::runtime_error& e) {
    throw StockctlError(fmt::format("--from-cmd cannot be run: {}", e.what()));
  }
  // Whatever the output held, a command that did not succeed is the error to report: its
  // output may be cut anywhere.
  std::exception_ptr parse_error;
  try {
    spool(*output, wanted, handler);
  } catch (const StockctlError&) {
    parse_error = std::current_exception();
  }
  if (std::string failure = output->finish(); !failure.empty()) {
    throw StockctlError(fmt::format("--from-cmd {}; nothing was written", failure));
  }
  if (parse_error) std::rethrow_exception(parse_error);
}

}  // namespace stockctl
