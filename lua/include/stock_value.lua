-- stock_value: is a stored value (or an initial stock) a stock value, -1 (unlimited) or a
-- canonical decimal integer 0 .. 2^53-1? Every script that reads an item's stock checks it here
-- (stock-2, put-2, hold-4002, settle-4002, and give_back_expired for reap-1 and the others), so
-- that a value like "abc", "007" or "1e3" is refused alike everywhere.
--
-- Reads these locals of the script it is spliced into:
--   raw    the value, a string (never nil: a missing key is the script's own case)
--   find   string.find
-- Defines raw_len: the length of raw when it is a count, 0 .. 2^53-1 ("0" is 1 long); 0 when it
-- is -1 (unlimited); false when it is not a stock value (corrupt, or an invalid initial stock).
--
-- Why a length: two canonical counts of different lengths are ordered by their lengths, so a
-- script compares a count with a quantity without tonumber (two strtod calls each) unless the
-- lengths are equal. A count has at most 16 digits (2^53-1 has 16; Lua numbers are doubles,
-- exact up to 2^53), and only a 16-digit one needs a number to be compared with the limit.
-- The hot path (a plain deduction) pays one length and one anchored pattern here.
local raw_len = #raw
if raw_len > 16 or not find(raw, '^[1-9]%d*$')
    or (raw_len == 16 and tonumber(raw) > 9007199254740991) then
  if raw == '-1' then
    raw_len = 0
  elseif raw ~= '0' then
    raw_len = false
  end
end
