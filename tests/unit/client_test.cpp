#include <doctest/doctest.h>

#include <deque>
#include <string>
#include <vector>

#include "redis/client.h"

using namespace stockctl;

namespace {

CallResult unknown() {
  CallResult r;
  r.state = CallResult::State::unknown;
  r.error = "connection reset";
  return r;
}

CallResult not_sent() {
  CallResult r;
  r.error = "connection refused";
  return r;
}

CallResult replied(Reply::Type type, const std::string& text = "") {
  CallResult r;
  r.state = CallResult::State::replied;
  r.reply.type = type;
  r.reply.str = text;
  return r;
}

// Answers each attempt from a script (the last answer repeats) and counts the attempts.
class ScriptedClient : public Client {
 public:
  explicit ScriptedClient(std::deque<CallResult> answers)
      : Client(ClientOptions{60, 0, 0}), answers_(std::move(answers)) {}
  int attempts = 0;
  std::vector<std::string> sent;  ///< first argument of every call sent

 protected:
  std::vector<CallResult> send(const std::vector<Call>& calls) override {
    ++attempts;
    std::vector<CallResult> out;
    for (const Call& call : calls) {
      sent.push_back(call.args.at(0));
      out.push_back(answers_.front());
      if (answers_.size() > 1) answers_.pop_front();
    }
    return out;
  }

 private:
  std::deque<CallResult> answers_;
};

Call idempotent_call(const std::string& name = "x") { return Call{nullptr, {name}, true, true}; }

}  // namespace

TEST_CASE("an unknown outcome stays unknown when the retries are never sent") {
  ScriptedClient client({unknown(), not_sent()});
  auto results = client.run({idempotent_call()});
  CHECK(client.attempts > 1);
  CHECK(results[0].state == CallResult::State::unknown);
  CHECK(results[0].error.rfind("outcome unknown", 0) == 0);
}

TEST_CASE("an unknown outcome stays unknown when a retry is refused with LOADING") {
  ScriptedClient client({unknown(), replied(Reply::Type::error, "LOADING Redis is loading")});
  auto results = client.run({idempotent_call()});
  CHECK(results[0].state == CallResult::State::unknown);
}

TEST_CASE("a real answer to a retry replaces the unknown outcome") {
  ScriptedClient client({unknown(), replied(Reply::Type::status, "OK")});
  auto results = client.run({idempotent_call()});
  CHECK(client.attempts == 2);
  CHECK(results[0].state == CallResult::State::replied);
  CHECK(results[0].reply.str == "OK");
}

TEST_CASE("a call that is not idempotent is never sent again after an unknown outcome") {
  ScriptedClient client({unknown(), replied(Reply::Type::status, "OK")});
  auto results = client.run({Call{nullptr, {"x"}, false, true}});
  CHECK(client.attempts == 1);
  CHECK(results[0].state == CallResult::State::unknown);
}

TEST_CASE("a call never sent is sent again, idempotent or not") {
  ScriptedClient client({not_sent(), replied(Reply::Type::status, "OK")});
  auto results = client.run({Call{nullptr, {"x"}, false, true}});
  CHECK(client.attempts == 2);
  CHECK(results[0].state == CallResult::State::replied);
}

TEST_CASE("started windows are finished in the order they were started") {
  ScriptedClient client({replied(Reply::Type::status, "OK")});
  client.start({idempotent_call("a")});
  client.start({idempotent_call("b"), idempotent_call("c")});
  CHECK(client.finish().size() == 1);
  CHECK(client.finish().size() == 2);
  CHECK(client.sent == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("a write left without an answer says whether it may have been applied") {
  ScriptedClient lost({unknown()});
  CHECK(lost.run({Call{nullptr, {"x"}, false, true}})[0].error ==
        "outcome unknown: connection reset");
  ScriptedClient refused({not_sent()});
  CHECK(refused.run({Call{nullptr, {"x"}, false, true}})[0].error.rfind(
            "not applied: connection refused (", 0) == 0);
}

TEST_CASE("a read never reports an unknown outcome, and says what was tried") {
  ScriptedClient client({unknown()});
  auto results = client.run({Call{nullptr, {"GET"}, true}});
  CHECK(client.attempts > 1);
  CHECK(results[0].error.rfind("connection reset (", 0) == 0);
  CHECK(results[0].error.find(std::to_string(client.attempts) + " tries over ") !=
        std::string::npos);
}

TEST_CASE("a call refused for good is not sent again") {
  CallResult hopeless = not_sent();
  hopeless.hopeless = true;
  ScriptedClient client({hopeless, replied(Reply::Type::status, "OK")});
  auto results = client.run({idempotent_call()});
  CHECK(client.attempts == 1);
  CHECK(results[0].error == "not applied: connection refused");
}
