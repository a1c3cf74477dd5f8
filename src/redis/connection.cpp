#include "redis/connection.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <charconv>

#include "redis/errors.h"
#include "redis/sentinel.h"
#include "redis/transport.h"

namespace stockctl {
namespace {

Reply convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::string;
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::status;
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::error;
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::array;
      break;
    default:
      out.type = Reply::Type::nil;
      break;
  }
  out.integer = r->integer;
  if (r->str) out.str.assign(r->str, r->len);
  out.elements.reserve(r->elements);
  for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
  return out;
}

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};

}  // namespace

void Connection::Free::operator()(redisReader* reader) const { redisReaderFree(reader); }

Connection::Connection(const ConnectOptions& options)
    : where_(describe_endpoint(options.url)),
      timeout_ms_(options.timeout_ms),
      reader_(redisReaderCreate()) {
  if (options.url.kind == RedisUrl::Kind::sentinel) {
    // Behind sentinels every (re)connection asks them anew: after a failover it reaches the
    // new master. This object takes over the confirmed master's connection.
    std::unique_ptr<Connection> master = connect_to_master(options);
    where_ = std::move(master->where_);
    sentinel_replicas_ = master->sentinel_replicas_;
    transport_ = std::move(master->transport_);
    reader_ = std::move(master->reader_);
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
    // A password for a server that has none is refused rather than dropped (redis-cli warns and
    // goes on): a URL or environment that carries one was meant for a server that asks for it.
    if (r.str.find("without any password configured") != std::string::npos) {
      throw AuthenticationError(fmt::format(
          "authentication failed at {}: the server asks for no password, but one was given "
          "(is this the server you meant?)",
          where_));
    }
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
  void* raw = nullptr;
  if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) {
    throw ConnectionError(
        fmt::format("talking to {}: protocol error: {}", where_, reader_->errstr));
  }
  if (raw == nullptr) return std::nullopt;
  std::unique_ptr<redisReply, ReplyFree> reply(static_cast<redisReply*>(raw));
  return convert(reply.get());
}

void Connection::fill(bool wait) {
  char buf[64 * 1024];
  do {
    std::size_t n = 0;
    try {
      n = transport_->read_some(buf, sizeof buf, wait ? timeout_ms_ + extra_ms_ : -1);
    } catch (const TimeoutError&) {
      // Silence says nothing about TLS (a TLS port refuses plain text at once), and asking
      // again would wait as long once more: a paused server would cost twice --timeout.
      throw;
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
    redisReaderFeed(reader_.get(), buf, n);
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

Reply Connection::read_beyond_timeout(long long extra_ms) {
  struct Restore {
    long long& extra;
    ~Restore() { extra = 0; }
  } restore{extra_ms_};
  extra_ms_ = extra_ms;
  return read();
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
