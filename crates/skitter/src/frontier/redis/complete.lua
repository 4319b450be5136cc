-- Acks a lease, releases its host slot and applies the answer's feedback (see
-- `feedback` in common.lua). ARGV: prefix, max_in_flight, lease id, signal,
-- wait ms, reason, and for a URL the worker quarantined (its lease lost too
-- often), its URL: it is kept in the hash `quarantine` (URL -> times lost),
-- for `skitter status`. Returns {1, reason, cut, limit, gap ms}, or {0, 0, 0, 0, 0}
-- if the lease is gone (it expired and was reclaimed, or an earlier attempt
-- already acked it), or {2, 0, 0, 0, 0} if its record was malformed (dropped).
local max_in_flight = tonumber(ARGV[2])
local host, entry, lost = take_lease(ARGV[3])
if not host then
  return {entry, 0, 0, 0, 0}
end
if ARGV[7] then
  redis.call('HSET', P .. 'quarantine', ARGV[7], lost)
end
local now = now_ms()
local t = feedback(host, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), max_in_flight, now)
schedule(host, now)
return {1, t[1], t[2], t[3], t[4]}
