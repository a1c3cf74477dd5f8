#include "commands/put_runner.h"

#include <fmt/format.h>

#include <optional>
#include <thread>

#include "cli/diagnostics.h"
#include "commands/durability.h"
#include "scripts/registry.h"

namespace stockctl {

Call PutRunner::call_for(const PutItem& item) const {
  // Storing a given value is idempotent: sending it again can at most turn "created" into "kept".
  return Call{&put_script(),
              {item.result.key, companion_key(item.result.key, ":lock"), std::to_string(item.value),
               std::string(put_script_mode(mode_)), std::to_string(ttl_s_), "1"},
              true,
              !mode_.dry_run};
}

void PutRunner::apply(PutItem& item, const CallResult& result) const {
  ItemResult& r = item.result;
  if (result.state != CallResult::State::replied) return set_error(r, Status::error, result.error);
  const Reply& reply = result.reply;
  if (reply.is_error()) return apply_error_reply(r, reply.str);
  if (reply.type != Reply::Type::array || reply.elements.size() != 2) {
    return set_error(
        r, Status::error,
        fmt::format("unexpected reply from the put script: {}", describe_reply(reply)));
  }
  apply_put_verdict(r, reply.elements[0].str, reply.elements[1].string_or_nil(), item.value, mode_);
  if (r.status == Status::ok && !mode_.dry_run) check_durability(r, result, client_.options());
}

void PutRunner::run(std::vector<PutItem>& items) {
  std::vector<PutItem*> pending;
  for (PutItem& item : items) {
    if (item.pending) pending.push_back(&item);
  }
  if (pending.empty()) return;
  // The put script costs the server about ten times a plain SET or GET, so plain commands do
  // what they can and the script runs only where atomic create-if-missing is needed.
  run_script(mode_.rebuild ? look_up(pending) : set_directly(pending));
}

std::vector<PutItem*> PutRunner::set_directly(const std::vector<PutItem*>& pending) {
  if (set_get_refused_) return pending;
  // SET ... GET answers the previous value, which is all init reports: nil means created.
  std::vector<Call> calls;
  calls.reserve(pending.size());
  for (const PutItem* item : pending) {
    Call call{nullptr, {"SET", item->result.key, std::to_string(item->value)}, true, true};
    if (!mode_.force) call.args.emplace_back("NX");
    call.args.emplace_back("GET");
    if (ttl_s_ > 0) {
      call.args.emplace_back("EX");
      call.args.push_back(std::to_string(ttl_s_));
    }
    calls.push_back(std::move(call));
  }
  std::vector<CallResult> results = client_.run(calls);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const CallResult& result = results[i];
    if (result.state == CallResult::State::replied && result.reply.is_error() &&
        result.reply.str.find("syntax error") != std::string::npos) {
      // Redis before 7.0 refuses NX with GET (and so applied nothing): use the script instead.
      set_get_refused_ = true;
      return std::vector<PutItem*>(pending.begin() + static_cast<long>(i), pending.end());
    }
    ItemResult& r = pending[i]->result;
    if (result.state != CallResult::State::replied) {
      set_error(r, Status::error, result.error);
    } else if (result.reply.is_error()) {
      apply_error_reply(r, result.reply.str);
    } else {
      std::optional<std::string> previous = result.reply.string_or_nil();
      const char* verdict = !previous ? "created" : mode_.force ? "replaced" : "kept";
      apply_put_verdict(r, verdict, previous, pending[i]->value, mode_);
      if (r.status == Status::ok) check_durability(r, result, client_.options());
    }
  }
  return {};
}

std::vector<PutItem*> PutRunner::look_up(const std::vector<PutItem*>& pending) {
  std::vector<Call> calls;
  calls.reserve(pending.size());
  for (const PutItem* item : pending)
    calls.push_back(Call{nullptr, {"GET", item->result.key}, true});
  std::vector<CallResult> results = client_.run(calls);
  std::vector<PutItem*> to_write;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    PutItem& item = *pending[i];
    const CallResult& result = results[i];
    if (result.state != CallResult::State::replied) {
      set_error(item.result, Status::error, result.error);
      continue;
    }
    if (result.reply.is_error()) {
      apply_error_reply(item.result, result.reply.str);
      continue;
    }
    std::optional<std::string> live = result.reply.string_or_nil();
    bool differs = !live || *live != std::to_string(item.value);
    if (!mode_.dry_run && (!live || (mode_.force && differs))) {
      to_write.push_back(&item);  // the script decides atomically, under the item's init lock
    } else {
      apply_put_verdict(item.result, live ? "kept" : "absent", live, item.value, mode_);
    }
  }
  return to_write;
}

void PutRunner::run_script(const std::vector<PutItem*>& sent) {
  if (sent.empty()) return;
  std::vector<Call> calls;
  calls.reserve(sent.size());
  for (const PutItem* item : sent) calls.push_back(call_for(*item));
  std::vector<CallResult> results = client_.run(calls);
  std::vector<PutItem*> locked;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    apply(*sent[i], results[i]);
    if (sent[i]->result.status == Status::busy) locked.push_back(sent[i]);
  }
  if (!locked.empty()) wait_for_lock_holders(locked);
}

void PutRunner::wait_for_lock_holders(std::vector<PutItem*>& locked) {
  // Someone is initializing these keys right now; give them --lock-wait to finish, then look
  // again. Whatever is still locked then is reported busy.
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(lock_.wait_ms);
  long long pause_ms = 5;
  while (!locked.empty() && clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    pause_ms = std::min<long long>(pause_ms * 2, 100);
    std::vector<Call> calls;
    calls.reserve(locked.size());
    for (PutItem* item : locked) calls.push_back(call_for(*item));
    std::vector<CallResult> results = client_.run(calls);
    std::vector<PutItem*> still;
    for (std::size_t i = 0; i < locked.size(); ++i) {
      apply(*locked[i], results[i]);
      if (locked[i]->result.status == Status::busy) still.push_back(locked[i]);
    }
    locked.swap(still);
  }
}

FileRunLog::FileRunLog(const std::string& report_path, bool fail_on_drift) {
  if (!report_path.empty()) report_ = std::make_unique<ReportFile>(report_path);
  fold_.set_fail_on_drift(fail_on_drift);
}

void FileRunLog::add(const ItemResult& item) {
  ++rows_;
  ++counts_[item.status];
  fold_.add(item.status);
  if (report_) report_->write(item);
  // Enough to see what is wrong without flooding a terminal when a server goes away mid-run.
  if (item.status == Status::error) errors_.add(item.sku, item.error);
}

void FileRunLog::finish() {
  if (report_) report_->commit();
}

}  // namespace stockctl
