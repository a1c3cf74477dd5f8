#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace stockctl {

/// What an error reply from Redis (or from one of our scripts) means to stockctl. Every error
/// text that stockctl acts on is recognized by classify_error_reply and nowhere else; the rest
/// of the code compares kinds.
enum class ErrorReply {
  other,              ///< any error we only report
  noscript,           ///< NOSCRIPT: the server has no copy of the script; load it and resend
  noauth,             ///< NOAUTH: the server wants a password we did not give
  moved,              ///< MOVED: a cluster node says the slot lives elsewhere
  ask,                ///< ASK: a cluster node says ask elsewhere, once, during a migration
  tryagain,           ///< TRYAGAIN: a multi-key call's keys are split by a slot migration
  clusterdown,        ///< CLUSTERDOWN: the cluster is reconfiguring
  loading,            ///< LOADING: the server is loading its data set
  readonly,           ///< READONLY: the node we reached has just become a replica
  masterdown,         ///< MASTERDOWN: a replica lost its primary
  wrongtype,          ///< WRONGTYPE: the key holds another type
  noperm,             ///< NOPERM, or an ACL failure inside a script: the user may not do it
  syntax,             ///< "ERR syntax error": the server does not know an option (SET GET < 6.2)
  cluster_disabled,   ///< "cluster support disabled": a cluster command sent to a plain server
  stockctl_conflict,  ///< a script refused a request id already used for something else
  stockctl_corrupt,   ///< a script found a stored value that is not a stock value
  stockctl_overflow,  ///< a script refused an addition past the largest stock
  stockctl_invalid,   ///< a script was called with keys or arguments it does not accept (a bug)
  stockctl_log_lost,  ///< a script made its whole change but met a log key of another type
  writes_refused,     ///< OOM or NOREPLICAS: the server refuses writes (and unflagged scripts) now
  unknown_command,    ///< "ERR unknown command": the server does not know the command
  no_function,        ///< "ERR Function not found": the server has no copy of the library
  library_exists,     ///< FUNCTION LOAD of a library that is already there
};

/// The kind of the error reply whose text is `text` ("CODE message...").
ErrorReply classify_error_reply(std::string_view text);

/// Whether the error reply `text` refuses the command `command` itself (lower case: "fcall"):
/// a server that does not know it ("ERR unknown command 'FCALL'", older servers quote it
/// `FCALL`) or an ACL that forbids it ("NOPERM ... the 'fcall' command"), not a key.
bool refuses_command(std::string_view text, std::string_view command);

/// A script's STOCKCTL_CORRUPT reply that names its line: "STOCKCTL_CORRUPT <i> <value>" (lines
/// counted from 1, as hold-4002.lua and settle-4002.lua send it).
struct CorruptLine {
  std::size_t index = 0;  ///< the line, counted from 0
  std::string reply;      ///< "STOCKCTL_CORRUPT <value>", the reply as if no line were named
};

/// The line that the error reply `text` names; nullopt when it is not such a reply.
std::optional<CorruptLine> corrupt_line(std::string_view text);

/// What an ACL refusal (NOPERM) means for stockctl: the key patterns and commands its user
/// needs, for a message. `prefix` is the items' key prefix (--prefix); "" when unknown.
std::string noperm_hint(std::string_view prefix);

/// The error reply `text` for a message (control characters escaped), followed for an ACL
/// refusal by "; " and noperm_hint(prefix): a refused user learns what to add.
std::string with_noperm_hint(std::string_view text, std::string_view prefix);

/// The error reply `text` to a call on `where` (a key, or a node's address), for a message:
/// "WHERE: TEXT", and for an ACL refusal "refused on WHERE: TEXT; " and noperm_hint(prefix), as
/// an item's NOPERM reads (apply_error_reply): Redis does not say which key it refused.
std::string error_on(std::string_view where, std::string_view text, std::string_view prefix);

/// `text` without the place in a script that Redis 7 adds to an error raised inside one ("...
/// script: stockctl_stock_<tag>, on @user_function:592."): it names our code, not the user's
/// data, and a message reads better without it.
std::string without_script_location(std::string_view text);

/// True for the kinds that say the command was not executed (the cluster is reconfiguring, the
/// server is loading, the node is no longer a primary), so sending it again is safe.
bool not_executed(ErrorReply kind);

}  // namespace stockctl
