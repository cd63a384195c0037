-- Gives up every attempt of an acquisition whose client stopped waiting after an attempt failed: a request of it
-- still on its way changes nothing when it lands (see lib/stale.lua). The caller then releases what an attempt that
-- landed earlier may have taken.
-- KEYS[1] the lock's abandoned set
-- ARGV[1] owner id (the acquisition's; a Redlock node's, the attempt's), ARGV[2] the highest attempt number it used
-- Returns 1.
-- Uses lib/stale.lua.
abandon_through(KEYS[1], ARGV[1], ARGV[2])
return 1
