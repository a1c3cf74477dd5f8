-- unlock: release a lock only if it still holds our token (compare-and-delete).
--
-- KEYS[1]  the lock key
-- ARGV[1]  the token this process stored with SET NX
--
-- Returns 1 when the lock was ours and is now released, 0 when it had expired or belongs to
-- another process (whose lock must never be deleted).

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
