-- Heartbeat: extends the given leases that still exist. ARGV: prefix, lease_ms,
-- then lease ids. Returns how many were extended.
local deadline = fmt(now_ms() + tonumber(ARGV[2]))
local renewed = 0
for i = 3, #ARGV do
  renewed = renewed + redis.call('ZADD', LEASES, 'XX', 'CH', deadline, ARGV[i])
end
return renewed
