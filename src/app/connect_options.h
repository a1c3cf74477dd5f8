#pragma once

#include <string>
#include <string_view>

#include "options/options.h"
#include "redis/client.h"
#include "redis/connection.h"

namespace stockctl {

/// The connection to make: URL from --url, STOCKCTL_URL, REDIS_URL or the default; password from
/// --password-file, the URL, STOCKCTL_PASSWORD or REDISCLI_AUTH. Warns when a password stands on
/// the command line. Throws InputError for a bad URL or an unsafe password file.
ConnectOptions connect_options(const CommonOptions& options);

/// For a refused login: where the password came from, by name only (never its value), in the
/// order connect_options() looks: "the password from STOCKCTL_PASSWORD (sources in order:
/// --password-file, the URL, STOCKCTL_PASSWORD, REDISCLI_AUTH)", or that none was found.
std::string password_sources(const CommonOptions& options, const ConnectOptions& connect);

/// How the client retries and waits for replicas. A command that writes no stock (`writes`
/// false) leaves the default --wait-replicas at 0: it asks no primary for its replicas and
/// warns of no write going unreplicated, since it makes none.
ClientOptions client_options(const CommonOptions& options, bool writes);

/// Whether subcommand `op` can write stock or its companions (everything but get, export, log
/// and doctor).
bool writes_stock(std::string_view op);

}  // namespace stockctl
