-- tombstone: mark a cluster group that an aborted attempt never held, so that a prepare of it
-- still in flight (a paused process) is refused instead of holding units nobody gives back.
--
-- KEYS[1]  the group's record (as hold-4002.lua writes it, in the group's slot)
-- ARGV[1]  the tombstone's canonical text (never the canonical text of real lines)
-- ARGV[2]  how long the tombstone is kept, in seconds
--
-- Returns 1 when the tombstone was written now (the group was never held: nothing to give
-- back), 2 when it was there already, 0 when the group has a real record (the caller releases
-- it). The tombstone is a hash whose `canon` field differs from every cart's, which hold-4002
-- answers with STOCKCTL_CONFLICT and without holding anything. It is written only where no
-- key exists, whatever form hold-4002's own records take.

local kind = redis.call('TYPE', KEYS[1])
kind = type(kind) == 'table' and kind.ok or kind
if kind == 'none' then
  redis.call('HSET', KEYS[1], 'canon', ARGV[1])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return 1
end
if kind == 'hash' and redis.call('HGET', KEYS[1], 'canon') == ARGV[1] then return 2 end
return 0
