#include "redis/connection.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <pthread.h>

#include <cerrno>
#include <charconv>
#include <csignal>

#include "redis/errors.h"

namespace stockctl {
namespace {

timeval to_timeval(long long ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

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

// hiredis writes with write(2), which raises SIGPIPE when the server has closed the connection:
// that would kill the process mid-batch, before it could say what became of each item in flight.
// The signal is blocked around socket writes and one it raised is discarded, so a broken
// connection surfaces as EPIPE, an error like any other. Standard output keeps the default: a
// closed pipe there ends the process, as it does any filter's.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &saved_);
  }
  ~SigpipeBlocked() {
    sigset_t pending;
    sigpending(&pending);
    if (!already_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &now) == -1 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t saved_{};
  bool already_pending_ = false;
};

}  // namespace

void Connection::Free::operator()(redisContext* ctx) const { redisFree(ctx); }

Connection::Connection(const ConnectOptions& options)
    : where_(describe_endpoint(options.url)), timeout_ms_(options.timeout_ms) {
  timeval connect_tv = to_timeval(options.connect_timeout_ms);
  const RedisUrl& url = options.url;
  ctx_.reset(url.kind == RedisUrl::Kind::unix_socket
                 ? redisConnectUnixWithTimeout(url.path.c_str(), connect_tv)
                 : redisConnectWithTimeout(url.host.c_str(), url.port, connect_tv));
  if (!ctx_ || ctx_->err) {
    throw context_error(ctx_.get(), "cannot connect to", where_, options.connect_timeout_ms);
  }
  if (redisSetTimeout(ctx_.get(), to_timeval(options.timeout_ms)) != REDIS_OK) {
    throw context_error(ctx_.get(), "cannot set the timeout of", where_, options.timeout_ms);
  }
  authenticate(options);
  if (url.db != 0) {
    Reply r = command({"SELECT", std::to_string(url.db)});
    if (r.is_error()) {
      throw ConnectionError(
          fmt::format("cannot select database {} at {}: {}", url.db, where_, r.str));
    }
  }
}

Connection::~Connection() = default;

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
  Reply r = command(argv);
  if (!r.is_error()) return;
  if (options.password) {
    std::string why = r.str;
    if (!why.empty() && why.back() == '.') why.pop_back();  // the message goes on after it
    throw AuthenticationError(fmt::format("authentication failed at {}: {}", where_, why));
  }
  if (r.error_code() == "NOAUTH") {
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
  // RESP is built here in one reused buffer: hiredis's own argv formatting grows a string once
  // per argument and was the largest cost of a bulk load.
  std::string& out = resp_;
  out.clear();
  append_count(out, '*', head.size() + tail.size());
  for (std::string_view a : head) append_bulk(out, a);
  for (const std::string& a : tail) append_bulk(out, a);
  if (redisAppendFormattedCommand(ctx_.get(), out.data(), out.size()) != REDIS_OK) {
    throw context_error(ctx_.get(), "talking to", where_, timeout_ms_);
  }
}

Reply Connection::read() {
  void* raw = nullptr;
  // Most replies of a window are already buffered: only go to the socket (and pay for the
  // signal mask) when none is.
  if (redisGetReplyFromReader(ctx_.get(), &raw) != REDIS_OK) {
    throw context_error(ctx_.get(), "talking to", where_, timeout_ms_);
  }
  if (raw == nullptr) {
    SigpipeBlocked quiet;  // redisGetReply first writes what is queued
    if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr) {
      throw context_error(ctx_.get(), "talking to", where_, timeout_ms_);
    }
  }
  std::unique_ptr<redisReply, ReplyFree> reply(static_cast<redisReply*>(raw));
  return convert(reply.get());
}

int Connection::fd() const { return ctx_->fd; }

void Connection::flush() {
  SigpipeBlocked quiet;
  int done = 0;
  while (!done) {
    if (redisBufferWrite(ctx_.get(), &done) != REDIS_OK) {
      throw context_error(ctx_.get(), "talking to", where_, timeout_ms_);
    }
  }
}

std::optional<Reply> Connection::read_ready() {
  void* raw = nullptr;
  // A reply may already be buffered from an earlier read; only read the socket when not.
  if (redisGetReplyFromReader(ctx_.get(), &raw) != REDIS_OK) {
    throw context_error(ctx_.get(), "talking to", where_, timeout_ms_);
  }
  if (raw == nullptr) {
    if (redisBufferRead(ctx_.get()) != REDIS_OK ||
        redisGetReplyFromReader(ctx_.get(), &raw) != REDIS_OK) {
      throw context_error(ctx_.get(), "talking to", where_, timeout_ms_);
    }
  }
  if (raw == nullptr) return std::nullopt;
  std::unique_ptr<redisReply, ReplyFree> reply(static_cast<redisReply*>(raw));
  return convert(reply.get());
}

Reply Connection::command(const std::vector<std::string>& argv) {
  append(argv);
  return read();
}

}  // namespace stockctl
