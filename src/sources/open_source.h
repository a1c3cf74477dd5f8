#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "sources/record.h"

namespace stockctl {

enum class Format { csv, tsv, json, ndjson };

/// Parses a --format value ("csv", "tsv", "json", "ndjson" or "jsonl"); nullopt if unknown.
std::optional<Format> parse_format(const std::string& name);

/// The format a path's extension names, in any ASCII case (`STOCK.CSV` is CSV); nullopt when it
/// names none.
std::optional<Format> format_from_extension(const std::string& path);

/// Reads records of any format from a stream (pure: no files are opened here); `delimiter`
/// separates CSV's fields.
void read_records(std::istream& in, Format format, const WantedColumns& wanted,
                  const RecordHandler& handler, char delimiter = ',');

/// A command whose standard output is the source (--from-cmd).
struct SourceCommand {
  std::string command;
  std::chrono::milliseconds timeout;
};

/// A source file, standard input ("-") or a command's output, that can be read more than once:
/// validation reads it in full before anything is written, then the write pass reads it again.
/// Standard input, a command's output and a path that is not a regular file (a FIFO, a shell's
/// `<(...)`, /dev/stdin) can be read only once: they are copied to an anonymous temporary file
/// during the first pass, never held in memory.
class Source {
 public:
  /// Opens `path` ("-" = standard input); CSV fields are separated by `delimiter`. Throws
  /// InputError when the format cannot be told or a delimiter other than ',' is given for
  /// another format, and IoError when the file cannot be opened (a FIFO or a device: when the
  /// first read opens it).
  Source(std::string path, std::optional<Format> format, char delimiter = ',');
  /// Runs `command` on the first read (format: `format`, else CSV). A first read that finds the
  /// command failed, killed or timed out throws StockctlError (exit 1), whatever its output held.
  Source(SourceCommand command, std::optional<Format> format, char delimiter = ',');
  ~Source();
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  /// Streams every record to `handler`. Throws IoError when reading fails.
  void read(const WantedColumns& wanted, const RecordHandler& handler);

  /// The name used in messages: the path, "<stdin>" or "<from-cmd>".
  const std::string& name() const { return name_; }

 private:
  std::string path_;
  std::string name_;
  Format format_;
  char delimiter_ = ',';
  std::optional<SourceCommand> command_;
  bool once_ = false;           // a path that can be read only once (a FIFO, a device)
  std::FILE* spool_ = nullptr;  // standard input, the command's output or such a path, once read
  bool spooled_ = false;

  /// The first read of standard input or the command: parses it while copying it to the spool.
  void spool(std::streambuf& input, const WantedColumns& wanted, const RecordHandler& handler);
  void read_command(const WantedColumns& wanted, const RecordHandler& handler);
  /// Refuses a delimiter that the format does not use. Throws InputError.
  void check_delimiter() const;
};

}  // namespace stockctl
