#pragma once

#include <string>
#include <vector>

namespace stockctl {

/// ROLE's reply in the shape its parser reads, filled in from the wire by the redis layer
/// (redis/role.h): each top-level element is a text (a bulk string, or an integer in decimal)
/// or a list of entries, each entry a list of texts (a master's replicas: host, port, offset).
struct RoleReply {
  struct Element {
    bool list = false;
    std::string text;
    std::vector<std::vector<std::string>> entries;
  };
  bool error = false;  ///< an error reply (ROLE refused by an ACL, ...)
  std::vector<Element> elements;
};

/// What a node says it is.
struct Role {
  enum class Kind { master, replica, sentinel, unknown };
  Kind kind = Kind::unknown;
  /// A master: its replicas connected now ("host:port" each), as ROLE lists them.
  std::vector<std::string> replicas;
  /// A replica: its master's "host:port", and whether its link to it is up ("connected").
  std::string master;
  bool link_up = false;

  bool is_master() const { return kind == Kind::master; }
  /// A master's replicas connected now; 0 for any other role.
  int attached() const { return static_cast<int>(replicas.size()); }
};

/// Reads ROLE's reply: ["master", offset, [[host, port, offset], ...]], ["slave", host, port,
/// state, offset] or ["sentinel", [names]]. Anything else (an error, a short or unknown reply)
/// is Kind::unknown, which no caller takes for a master.
Role parse_role(const RoleReply& reply);

}  // namespace stockctl
