-- remove: take an item's stock key away for `delete`, unless the item is split.
--
-- KEYS[1]  the item's stock key
--
-- Returns {'removed', value}: the key is gone, and value is what it held (nil when it was
-- missing); or {'split', record}: the key holds a split item's layout record, and is kept.
--
-- Why a script and not GETDEL: a split item's units are in its buckets, which delete does not
-- remove (docs/split.md). stockctl reads the key first and refuses a split item; a split that
-- began after that read would lose its record here and leave its buckets behind, so the check
-- is made again in the same moment as the delete.
local value = redis.call('GET', KEYS[1])
if value and (value == 'stockctl:split:1' or string.find(value, '^stockctl:split:1 ')) then
  return {'split', value}
end
if value then redis.call('DEL', KEYS[1]) end
return {'removed', value}
