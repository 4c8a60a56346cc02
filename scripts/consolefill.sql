-- Fills a Herald PostgreSQL database (schema herald, migrated) with :rows
-- deliveries for the console's page-time measurements (docs/PERFORMANCE.md,
-- "The console"): mostly sent, 1 % dead, 0.2 % pending, 0.01 % leased and
-- unknown, over 100,000 users and the last 30 days, plus a day of the
-- per-minute rollup from 4 instances. Usage:
--
--   psql -v rows=10000000 -f scripts/consolefill.sql postgres://…/herald
SET search_path = herald;
\timing on
INSERT INTO notifications (id, user_id, type, channels, priority, payload_mode, guarantee, created_at)
SELECT 'n' || g, 'u' || (g % 100000), CASE WHEN g % 3 = 0 THEN 'promo' ELSE 'receipt' END, '{push}', 'normal', 'notification',
	'at_least_once', now() - (g % 2592000) * interval '1 second'
FROM generate_series(1, :rows) g;
INSERT INTO deliveries (notification_id, user_id, type, channel, provider, device_id, state, guarantee, attempt, max_attempts,
	run_at, last_error_code, created_at, updated_at)
SELECT 'n' || g, 'u' || (g % 100000), CASE WHEN g % 3 = 0 THEN 'promo' ELSE 'receipt' END,
	CASE WHEN g % 10 = 0 THEN 'email' ELSE 'push' END, CASE WHEN g % 10 = 0 THEN 'smtp' ELSE 'fcm' END, 'd' || (g % 100000),
	CASE WHEN g % 100 = 7 THEN 'dead' WHEN g % 500 = 11 THEN 'pending' WHEN g % 10000 = 13 THEN 'leased'
		WHEN g % 10000 = 17 THEN 'unknown' ELSE 'sent' END,
	'at_least_once', 1, 4, now() - (g % 2592000) * interval '1 second',
	CASE WHEN g % 100 = 7 THEN (ARRAY['UNREGISTERED', 'UNAVAILABLE', 'INTERNAL'])[1 + g % 3] ELSE '' END,
	now() - (g % 2592000) * interval '1 second', now() - (g % 2592000) * interval '1 second'
FROM generate_series(1, :rows) g;
INSERT INTO delivery_minutes (minute, instance, channel, outcome, error_code, count)
SELECT date_trunc('minute', now()) - m * interval '1 minute', 'i' || i, 'push', o, CASE WHEN o = 'failed' THEN 'UNAVAILABLE' ELSE '' END,
	CASE WHEN o = 'sent' THEN 5000 ELSE 40 END
FROM generate_series(0, 1439) m, generate_series(1, 4) i, unnest(ARRAY['sent', 'failed']) o;
ANALYZE notifications;
ANALYZE deliveries;
ANALYZE delivery_minutes;
