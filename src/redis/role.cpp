#include "redis/role.h"

#include <string>

namespace stockctl {
namespace {

// Bulk strings and integers alike as text: ports and offsets come as integers.
std::string role_element_text(const Reply& r) {
  return r.type == Reply::Type::integer ? std::to_string(r.integer) : r.str;
}

RoleReply::Element role_element(const Reply& r) {
  RoleReply::Element e;
  if (r.type != Reply::Type::array) {
    e.text = role_element_text(r);
    return e;
  }
  e.list = true;
  for (const Reply& entry : r.elements) {
    std::vector<std::string>& fields = e.entries.emplace_back();
    for (const Reply& field : entry.elements) fields.push_back(role_element_text(field));
  }
  return e;
}

}  // namespace

Role role_of(const Reply& reply) {
  RoleReply shape;
  shape.error = reply.type != Reply::Type::array;
  for (const Reply& element : reply.elements) shape.elements.push_back(role_element(element));
  return parse_role(shape);
}

Role ask_role(Connection& conn) { return role_of(conn.command({"ROLE"})); }

}  // namespace stockctl
