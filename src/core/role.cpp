#include "core/role.h"

namespace stockctl {
namespace {

bool role_text_at(const RoleReply& reply, std::size_t i) {
  return i < reply.elements.size() && !reply.elements[i].list;
}

std::string role_address(const std::string& host, const std::string& port) {
  // An IPv6 host is bracketed, as every "host:port" stockctl prints.
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + port;
}

Role parse_master_role(const RoleReply& reply) {
  Role role;
  if (reply.elements.size() < 3 || !reply.elements[2].list) return role;
  role.kind = Role::Kind::master;
  for (const std::vector<std::string>& entry : reply.elements[2].entries) {
    role.replicas.push_back(entry.size() >= 2 ? role_address(entry[0], entry[1]) : std::string());
  }
  return role;
}

Role parse_replica_role(const RoleReply& reply) {
  Role role;
  if (!role_text_at(reply, 1) || !role_text_at(reply, 2) || !role_text_at(reply, 3)) return role;
  role.kind = Role::Kind::replica;
  role.master = role_address(reply.elements[1].text, reply.elements[2].text);
  role.link_up = reply.elements[3].text == "connected";
  return role;
}

}  // namespace

Role parse_role(const RoleReply& reply) {
  if (reply.error || !role_text_at(reply, 0)) return Role{};
  const std::string& name = reply.elements[0].text;
  if (name == "master") return parse_master_role(reply);
  if (name == "slave") return parse_replica_role(reply);
  if (name == "sentinel") return Role{Role::Kind::sentinel, {}, {}, false};
  return Role{};
}

}  // namespace stockctl
