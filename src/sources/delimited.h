#pragma once

#include <istream>

#include "sources/record.h"

namespace stockctl {

/// Reads CSV with a header row (RFC 4180: quoted fields, "" escapes, line breaks inside quotes,
/// CRLF, a leading UTF-8 BOM). Blank lines are skipped. Fields are separated by `delimiter`
/// (--delimiter); a header without the first wanted column (the SKU's) is reported with the
/// fields it was split into, and with a hint when another common separator is in it.
void read_csv(std::istream& in, const WantedColumns& wanted, const RecordHandler& handler,
              char delimiter = ',');

/// Reads TSV as `mysql --batch` prints it: a header row, tab separated fields, backslash escapes
/// (\t \n \r \0 \\), and NULL or \N for SQL NULL.
void read_tsv(std::istream& in, const WantedColumns& wanted, const RecordHandler& handler);

}  // namespace stockctl
