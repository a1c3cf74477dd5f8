#include "redis/connection.h"

#include <fmt/format.h>

#include <charconv>

#include "redis/errors.h"
#include "redis/sentinel.h"
#include "redis/transport.h"

namespace stockctl {

Connection::Connection(const ConnectOptions& options)
    : where_(describe_endpoint(options.url)), timeout_ms_(options.timeout_ms) {
  if (options.url.kind == RedisUrl::Kind::sentinel) {
    // Behind sentinels every (re)connection asks them anew: after a failover it reaches the
    // new master. This object takes over the confirmed master's connection.
    std::unique_ptr<Connection> master = connect_to_master(options);
    where_ = std::move(master->where_);
    transport_ = std::move(master->transport_);
    in_ = std::move(master->in_);
    in_pos_ = master->in_pos_;
    return;
  }
  transport_ =
      std::make_unique<Transport>(options.url, options.tls, where_, options.connect_timeout_ms);
  const RedisUrl& url = options.url;
  authenticate(options);
  if (url.db != 0) {
    Reply r = setup_command({"SELECT", std::to_string(url.db)});
    if (r.is_error()) {
      throw ConnectionError(
          fmt::format("cannot select database {} at {}: {}", url.db, where_, r.str));
    }
  }
}

// Test doubles script a server by the commands it is sent; they answer scripts as EVALSHA.
Connection::Connection(std::string where)
    : where_(std::move(where)), script_calls_(ScriptCalls::evalsha), timeout_ms_(0) {}

Connection::~Connection() = default;

std::unique_ptr<Connection> open_connection(const ConnectOptions& options) {
  return std::make_unique<Connection>(options);
}

void Connection::authenticate(const ConnectOptions& options) {
  // AUTH with a password, else PING: either way a server that wants other credentials says so
  // now, once, rather than refusing every command of a batch (and a server that accepts the
  // connection but does not answer is found before anything is sent).
  std::vector<std::string> argv{"PING"};
  if (options.password) {
    argv = {"AUTH"};
    if (options.user) argv.push_back(*options.user);
    argv.push_back(*options.password);
  }
  Reply r = setup_command(argv);
  if (!r.is_error()) return;
  if (options.password) {
    std::string why = r.str;
    if (!why.empty() && why.back() == '.') why.pop_back();  // the message goes on after it
    throw AuthenticationError(fmt::format("authentication failed at {}: {}", where_, why));
  }
  if (r.error_kind() == ErrorReply::noauth) {
    throw AuthenticationError(fmt::format(
        "authentication failed at {}: the server requires a password (NOAUTH)", where_));
  }
  // Any other refusal of PING (an ACL user without +ping) is not about our credentials.
}

namespace {

void append_count(std::string& out, char kind, std::size_t n) {
  char digits[24];
  digits[0] = kind;
  auto end = std::to_chars(digits + 1, digits + sizeof digits - 2, n).ptr;
  *end++ = '\r';
  *end++ = '\n';
  out.append(digits, static_cast<std::size_t>(end - digits));
}

void append_bulk(std::string& out, std::string_view arg) {
  append_count(out, '$', arg.size());
  out += arg;
  out += "\r\n";
}

}  // namespace

void Connection::append(const std::vector<std::string>& argv) { append({}, argv); }

void Connection::append(std::initializer_list<std::string_view> head,
                        const std::vector<std::string>& tail) {
  // RESP is built straight into the output buffer: hiredis's own argv formatting grows a string
  // once per argument, which a bulk load does millions of times.
  append_count(out_, '*', head.size() + tail.size());
  for (std::string_view a : head) append_bulk(out_, a);
  for (const std::string& a : tail) append_bulk(out_, a);
}

std::optional<Reply> Connection::next_buffered() {
  if (in_pos_ == in_.size()) {
    in_.clear();
    in_pos_ = 0;
    return std::nullopt;
  }
  std::optional<Reply> reply(std::in_place);
  std::size_t used = 0;
  switch (parse_reply(std::string_view(in_).substr(in_pos_), *reply, used)) {
    case ReplyParse::complete:
      in_pos_ += used;
      return reply;
    case ReplyParse::partial:
      // The replies before it are read: keep only the start of this one.
      in_.erase(0, in_pos_);
      in_pos_ = 0;
      return std::nullopt;
    case ReplyParse::invalid:
      break;
  }
  throw ConnectionError(fmt::format("talking to {}: protocol error: {}", where_, reply->str));
}

void Connection::fill(bool wait) {
  char buf[64 * 1024];
  do {
    std::size_t n = 0;
    try {
      n = transport_->read_some(buf, sizeof buf, wait ? timeout_ms_ : -1);
    } catch (const ConnectionError&) {
      // A TLS port closes a plain connection at once, often before its alert can be read.
      if (!received_ && transport_->peer_speaks_tls(timeout_ms_)) throw speaks_tls();
      throw;
    }
    if (n == 0) return;
    if (!received_ && !transport_->tls() && (buf[0] == 0x15 || buf[0] == 0x16)) {
      throw speaks_tls();  // a TLS record (an alert) where a RESP reply was expected
    }
    received_ = true;
    in_.append(buf, n);
    wait = false;
  } while (transport_->pending());
}

TlsError Connection::speaks_tls() const {
  return TlsError(fmt::format(
      "talking to {}: the server speaks TLS on this port; use rediss:// or --tls", where_));
}

Reply Connection::read() {
  // Most replies of a window are already buffered: only go to the socket when none is.
  if (std::optional<Reply> r = next_buffered()) return std::move(*r);
  Connection::flush();  // this class's own: read() runs from the constructor too
  for (;;) {
    fill(true);
    if (std::optional<Reply> r = next_buffered()) return std::move(*r);
  }
}

int Connection::fd() const { return transport_->fd(); }

void Connection::flush() {
  if (out_.empty()) return;
  transport_->write_all(out_, timeout_ms_);
  out_.clear();
}

std::optional<Reply> Connection::read_ready() {
  if (std::optional<Reply> r = next_buffered()) return r;
  fill(false);
  return next_buffered();
}

Reply Connection::setup_command(const std::vector<std::string>& argv) {
  // Runs from the constructor, before any subclass exists: this class's own append and read.
  Connection::append({}, argv);
  return Connection::read();
}

Reply Connection::command(const std::vector<std::string>& argv) {
  append(argv);
  return read();
}

}  // namespace stockctl
