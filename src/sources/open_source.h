#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "sources/row.h"

namespace stockctl {

enum class Format { csv, tsv, json, ndjson };

/// Parses a --format value ("csv", "tsv", "json", "ndjson" or "jsonl"); nullopt if unknown.
std::optional<Format> parse_format(const std::string& name);

/// The format a path's extension names; nullopt when it names none.
std::optional<Format> format_from_extension(const std::string& path);

/// Reads records of any format from a stream (pure: no files are opened here).
void read_records(std::istream& in, Format format, const WantedColumns& wanted,
                  const RecordHandler& handler);

/// A source file, or standard input ("-"), that can be read more than once: validation reads
/// it in full before anything is written, then the write pass reads it again. Standard input is
/// copied to an anonymous temporary file during the first pass, never held in memory.
class Source {
 public:
  /// Opens `path` ("-" = standard input). Throws InputError when the format cannot be told
  /// and IoError when the file cannot be opened.
  Source(std::string path, std::optional<Format> format);
  ~Source();
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  /// Streams every record to `handler`. Throws IoError when reading fails.
  void read(const WantedColumns& wanted, const RecordHandler& handler);

  /// The name used in messages: the path, or "<stdin>".
  const std::string& name() const { return name_; }

 private:
  std::string path_;
  std::string name_;
  Format format_;
  std::FILE* spool_ = nullptr;  // standard input, once read
  bool stdin_read_ = false;
};

}  // namespace stockctl
