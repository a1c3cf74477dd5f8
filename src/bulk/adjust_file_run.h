#pragma once

#include <string>

#include "app/context.h"
#include "base/diagnostics.h"
#include "bulk/adjust_runner.h"
#include "options/options.h"

namespace stockctl {

/// deduct --file and add --file: validates the whole source, then applies its rows in pipelined
/// windows, printing one line per row in input order (invalid rows included). Without a
/// connection, or once interrupted, the rows left are reported not applied. Returns the exit
/// status the rows fold to; throws InputError when the source is invalid.
ExitCode run_adjust_file(Context& ctx, OpRunner::Op op, const std::string& name,
                         const OpOptions& options, const SourceOptions& source);

/// The item of deduct or add for `sku`; its key is set only for a valid SKU (`sku_valid`).
ItemResult adjust_item(const std::string& name, const KeyScheme& scheme, const std::string& sku,
                       bool sku_valid);

/// Prints an item, and on standard error the error of one that needs it (see ItemErrorEcho).
void emit_checked(Context& ctx, const ItemResult& item, ExitFold& fold, ItemErrorEcho& echo);

}  // namespace stockctl
