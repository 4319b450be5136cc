-- Acks a lease and releases its host slot. ARGV: prefix, max_in_flight,
-- lease id, back-off ms (negative: none). Returns 1, or 0 if the lease is gone
-- (it expired and was reclaimed, or an earlier attempt already acked it).
local max_in_flight = tonumber(ARGV[2])
local id, back_off = ARGV[3], tonumber(ARGV[4])
local v = redis.call('HGET', LEASE, id)
redis.call('ZREM', LEASES, id)
if not v then
  return 0
end
redis.call('HDEL', LEASE, id)
local host = split_lease(v)
local h = P .. 'h:' .. host
local now = now_ms()
release(host)
local st = redis.call('HMGET', h, 'limit', 'next')
local limit = tonumber(st[1]) or max_in_flight
if back_off >= 0 then
  -- The host asked us to slow down: halve its concurrency, push its next start.
  local next_start = math.max(tonumber(st[2]) or 0, now + back_off)
  redis.call('HSET', h, 'limit', math.max(1, math.floor(limit / 2)), 'next', fmt(next_start))
elseif limit < max_in_flight then
  redis.call('HSET', h, 'limit', limit + 1)
end
schedule(host, max_in_flight, now)
return 1
