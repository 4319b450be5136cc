-- Hands a lease back for another attempt: releases its host slot with the
-- answer's feedback, and puts its entry in the host's retry set r:<host>, due
-- after the retry wait, with its tries (one more if an attempt failed, 65536
-- more if it was answered 429: the twin of HostSlots::try_cost), and the times
-- its lease was lost before (kept beside the lease record). ARGV: prefix, max_in_flight, lease id,
-- signal, wait ms, reason, retry wait ms, tries so far. Returns as complete.lua.
do
  local garbled = garbled_counter()
  if garbled then
    return redis.error_reply(garbled)
  end
end
local max_in_flight = tonumber(ARGV[2])
local host, entry, lost = take_lease(ARGV[3])
if not host then
  return {entry, 0, 0, 0, 0}
end
local now = now_ms()
local t = feedback(host, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), max_in_flight, now)
local tries = tonumber(ARGV[8])
local attempted = ARGV[4] == '2' or ARGV[4] == '5' or (ARGV[4] == '3' and ARGV[6] ~= '4')
if ARGV[4] == '3' and ARGV[6] == '1' then
  tries = tries + 65536
elseif attempted then
  tries = tries + 1
end
redis.call('ZADD', P .. 'r:' .. host, fmt(now + tonumber(ARGV[7])), retry_member(tries, lost, entry))
redis.call('HINCRBY', COUNT, 'retrying', 1)
schedule(host, now)
return {1, t[1], t[2], t[3], t[4]}
