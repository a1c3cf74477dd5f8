#include "redis/scripts/held.h"

#include "core/quantity.h"
#include "core/sku.h"
#include "redis/scripts/registry.h"

namespace stockctl {

Call held_view_call(const std::string& stock_key) {
  return Call{
      &held_view_script(),
      {companion_key(stock_key, kHoldsSuffix), companion_key(stock_key, kHeldSuffix), stock_key},
      true};
}

std::optional<HeldView> held_view_from(const CallResult& result) {
  if (result.state != CallResult::State::replied) return std::nullopt;
  const Reply& reply = result.reply;
  if (reply.type == Reply::Type::integer) return HeldView{reply.integer, 0, std::nullopt};
  if (reply.type != Reply::Type::array || reply.elements.size() < 2 || reply.elements.size() > 3 ||
      reply.elements[0].type != Reply::Type::integer ||
      reply.elements[1].type != Reply::Type::integer || reply.elements[1].integer < 0) {
    return std::nullopt;
  }
  HeldView view{reply.elements[0].integer, reply.elements[1].integer, std::nullopt};
  if (reply.elements.size() == 3) view.value = reply.elements[2].string_or_nil();
  return view;
}

std::optional<std::string> logical_value(const std::optional<std::string>& stored,
                                         const HeldView& view) {
  const std::optional<std::string>& value = view.value ? *view.value : stored;
  if (!value || view.expired == 0) return value;
  const std::optional<std::int64_t> stock = parse_stored_value(*value);
  if (!stock || *stock == kUnlimited) return value;
  return std::to_string(*stock + view.expired);
}

}  // namespace stockctl
