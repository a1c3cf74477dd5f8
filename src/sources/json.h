#pragma once

#include <istream>

#include "sources/record.h"

namespace stockctl {

/// Reads a JSON source as a stream (SAX; no document is held in memory): either an array of
/// objects, one row each, or an object mapping SKU to stock (or to an object of columns).
/// The row's line is the line its object (or map key) starts on.
void read_json(std::istream& in, const WantedColumns& wanted, const RecordHandler& handler);

/// Reads NDJSON / JSON Lines: one object per line; blank lines are skipped.
void read_ndjson(std::istream& in, const WantedColumns& wanted, const RecordHandler& handler);

}  // namespace stockctl
