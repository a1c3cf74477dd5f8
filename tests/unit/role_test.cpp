#include "core/role.h"

#include <doctest/doctest.h>

using namespace stockctl;

namespace {

RoleReply::Element role_text(std::string t) {
  RoleReply::Element e;
  e.text = std::move(t);
  return e;
}

RoleReply::Element role_list(std::vector<std::vector<std::string>> entries) {
  RoleReply::Element e;
  e.list = true;
  e.entries = std::move(entries);
  return e;
}

RoleReply role_reply(std::vector<RoleReply::Element> elements) {
  RoleReply r;
  r.elements = std::move(elements);
  return r;
}

}  // namespace

TEST_CASE("a master lists the replicas connected now") {
  Role alone = parse_role(role_reply({role_text("master"), role_text("3129659"), role_list({})}));
  CHECK(alone.is_master());
  CHECK(alone.attached() == 0);
  Role two = parse_role(
      role_reply({role_text("master"), role_text("3129659"),
                  role_list({{"127.0.0.1", "9001", "3129242"}, {"::1", "9002", "3129543"}})}));
  CHECK(two.is_master());
  CHECK(two.attached() == 2);
  CHECK(two.replicas == std::vector<std::string>{"127.0.0.1:9001", "[::1]:9002"});
}

TEST_CASE("a replica names its master and whether its link is up") {
  Role up = parse_role(role_reply({role_text("slave"), role_text("127.0.0.1"), role_text("9000"),
                                   role_text("connected"), role_text("3167038")}));
  CHECK(up.kind == Role::Kind::replica);
  CHECK_FALSE(up.is_master());
  CHECK(up.attached() == 0);
  CHECK(up.master == "127.0.0.1:9000");
  CHECK(up.link_up);
  Role syncing = parse_role(role_reply({role_text("slave"), role_text("127.0.0.1"),
                                        role_text("9000"), role_text("sync"), role_text("-1")}));
  CHECK(syncing.kind == Role::Kind::replica);
  CHECK_FALSE(syncing.link_up);
}

TEST_CASE("a sentinel is a sentinel, never a master") {
  Role s = parse_role(role_reply({role_text("sentinel"), role_list({{"stock"}})}));
  CHECK(s.kind == Role::Kind::sentinel);
  CHECK_FALSE(s.is_master());
}

TEST_CASE("an error, an empty or short or unknown reply is no master") {
  RoleReply refused;
  refused.error = true;
  CHECK(parse_role(refused).kind == Role::Kind::unknown);
  CHECK(parse_role(role_reply({})).kind == Role::Kind::unknown);
  CHECK(parse_role(role_reply({role_list({})})).kind == Role::Kind::unknown);
  // A master whose replica list is missing or not a list: not taken for a master.
  CHECK(parse_role(role_reply({role_text("master"), role_text("1")})).kind == Role::Kind::unknown);
  CHECK(parse_role(role_reply({role_text("master"), role_text("1"), role_text("x")})).kind ==
        Role::Kind::unknown);
  CHECK(parse_role(role_reply({role_text("slave"), role_text("h")})).kind == Role::Kind::unknown);
  CHECK(parse_role(role_reply({role_text("leader")})).kind == Role::Kind::unknown);
  CHECK(parse_role(role_reply({role_text("master"), role_text("1"), role_list({})})).attached() ==
        0);
}
