-- extend: push a held lock's expiry forward, only while it still holds our token.
--
-- KEYS[1]  the lock key
-- ARGV[1]  the token this process stored with SET NX
-- ARGV[2]  the new time to live in milliseconds
--
-- Returns 1 when the lock is ours and was extended, 0 when it is lost.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
