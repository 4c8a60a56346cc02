-- The smaller records of scripts/consolefill/run: the notification types
-- the big tables use, rules and their runs, reminders, campaigns and
-- their runs, and Kafka dead events. The JSON columns are what Herald's
-- store writes (copied from records made through the API).
-- Variables: n, users, start, end (Unix seconds).
SET search_path = herald;
SET synchronous_commit = off;

INSERT INTO notification_types (name, config, updated_at)
	SELECT t, jsonb_build_object('name', t, 'channels', '["push", "in_app", "email", "sms"]'::jsonb,
		'critical', t IN ('password_reset', 'security_alert'),
		'priority', CASE WHEN t IN ('password_reset', 'security_alert') THEN 'HIGH' ELSE 'NORMAL' END,
		'guarantee', 'at_least_once', 'updated_at', '2026-01-01T00:00:00Z',
		'quiet_hours', t NOT IN ('password_reset', 'security_alert'), 'dedupe_window', 3600000000000),
		to_timestamp(:start)
	FROM unnest(ARRAY['order_shipped', 'new_message', 'password_reset', 'weekly_digest', 'payment_failed',
		'promo', 'security_alert', 'cart_reminder', 'friend_request', 'price_drop', 'recommendation']) t;

-- 40 rules on two topics, and 100,000 runs of them over the 30 days
-- (a few still running).
INSERT INTO rules (name, source, event, disabled, definition, created_at, updated_at)
	SELECT 'rule-' || lpad(k::text, 2, '0'), 'product.inventory.v1', 'PRICE_CHANGE', k % 10 = 9,
		jsonb_build_object('name', 'rule-' || lpad(k::text, 2, '0'),
			'when', '{"event": "PRICE_CHANGE", "detect": {"price_drop_pct": 10}}'::jsonb,
			'notify', '{"body": "Now {{.current_price}}", "type": "price_drop", "title": "{{.product_name}} is {{.drop_pct}}% off", "channels": ["push", "in_app"]}'::jsonb,
			'source', '{"kafka_topic": "product.inventory.v1"}'::jsonb,
			'audience', '{"limit": 100000, "interest": {"kinds": ["VIEW", "CLICK", "ADD_TO_CART"], "within": "168h0m0s"}}'::jsonb,
			'created_at', '0001-01-01T00:00:00Z', 'updated_at', '0001-01-01T00:00:00Z'),
		to_timestamp(:start - 86400), to_timestamp(:start - 86400)
	FROM generate_series(0, 39) k;
INSERT INTO rule_runs (rule, run_id, source, event_id, event, subject, job, state, cursor, recipients, enqueued,
		last_error, version, created_at, updated_at, finished_at)
	SELECT 'rule-' || lpad((g % 40)::text, 2, '0'), 'product.inventory.v1/' || g || '-' || (:start + g * 25),
		'kafka', g || '-' || (:start + g * 25), 'PRICE_CHANGE', 'product:' || (g % 5000),
		jsonb_build_object('notification', '{"type": "price_drop", "title": "Kettle is 15% off", "body": "Now 8500", "channels": ["push", "in_app"]}'::jsonb,
			'audience', jsonb_build_object('subject', 'product:' || (g % 5000), 'kinds', '["VIEW", "CLICK"]'::jsonb, 'limit', 100000)),
		CASE WHEN g > 99990 THEN 'running' WHEN g % 200 = 0 THEN 'failed' ELSE 'done' END,
		CASE WHEN g > 99990 THEN 'user-0001000' ELSE '' END, 20 + g % 80, 20 + g % 80,
		CASE WHEN g % 200 = 0 THEN 'audience: webhook answered 503' ELSE '' END, 3,
		to_timestamp(:start + g * 25), to_timestamp(:start + g * 25 + 4),
		CASE WHEN g > 99990 THEN NULL ELSE to_timestamp(:start + g * 25 + 4) END
	FROM generate_series(1, 100000) g;

-- 60,000 active reminders and 20,000 stopped ones.
INSERT INTO reminders (id, key, user_id, type, title, body, channels, priority, schedule, max_sends, expires_at,
		on_event, quiet_hours, state, stop_reason, stopped_at, schedule_start, next_at, next_occurrence, sent_count,
		version, created_at, updated_at)
	SELECT lpad(g::text, 26, 'R'), 'cart-' || g, 'user-' || lpad(((g * 7) % :users)::text, 7, '0'), 'cart_reminder',
		'Still thinking?', 'Your cart is waiting', ARRAY['push', 'in_app'], 'NORMAL',
		'{"backoff": {"max": "48h0m0s", "first": "1h0m0s", "factor": 2}}', 5, to_timestamp(:end + 86400 * 365),
		'checkout_completed', 'defer',
		CASE WHEN g % 4 = 0 THEN 'stopped' ELSE 'active' END,
		CASE WHEN g % 4 = 0 THEN 'event' ELSE '' END,
		CASE WHEN g % 4 = 0 THEN to_timestamp(:end - g * 30) END,
		to_timestamp(:end - g * 30),
		CASE WHEN g % 4 = 0 THEN NULL ELSE to_timestamp(:end + (g % 172800)) END,
		CASE WHEN g % 4 = 0 THEN NULL ELSE to_timestamp(:end + (g % 172800)) END,
		g % 3, 1, to_timestamp(:end - g * 30), to_timestamp(:end - g * 30)
	FROM generate_series(1, 80000) g;

-- 10 campaigns, each with a run a day.
INSERT INTO campaigns (name, definition, paused, next_at, next_occurrence, last_run_id, version, created_at, updated_at)
	SELECT 'campaign-' || k,
		jsonb_build_object('body', 'Ceramic mug set and more', 'type', 'recommendation', 'title', 'Your picks for today',
			'channels', '["push", "in_app"]'::jsonb, 'priority', 'NORMAL',
			'audience', '{"active_within": "168h0m0s"}'::jsonb,
			'schedule', jsonb_build_object('cron', '0 ' || (k + 8) || ' * * *', 'time_zone', 'Europe/Berlin')),
		k = 9, to_timestamp(:end + 3600 * k), to_timestamp(:end + 3600 * k), 'scheduled-' || k || '-29', 1,
		to_timestamp(:start - 86400), to_timestamp(:start - 86400)
	FROM generate_series(0, 9) k;
INSERT INTO campaign_runs (campaign, run_id, occurrence, state, cursor, recipients, enqueued, skipped, fetch_failed,
		render_failed, last_error, restarts, version, started_at, updated_at, finished_at)
	SELECT 'campaign-' || k, 'scheduled-' || k || '-' || d, to_timestamp(:start + 86400 * d + 3600 * k),
		CASE WHEN d % 13 = 5 THEN 'failed' ELSE 'done' END, 'user-' || lpad((:users - 1)::text, 7, '0'),
		:users, :users - 100, 100, CASE WHEN d % 13 = 5 THEN 1 ELSE 0 END, 0,
		CASE WHEN d % 13 = 5 THEN 'fetch: status 503' ELSE '' END, 0, 5,
		to_timestamp(:start + 86400 * d + 3600 * k), to_timestamp(:start + 86400 * d + 3600 * k + 600),
		to_timestamp(:start + 86400 * d + 3600 * k + 600)
	FROM generate_series(0, 9) k, generate_series(0, 29) d;

-- 20,000 Kafka records Herald gave up on.
INSERT INTO dead_events (topic, partition, "offset", kind, key, value, payload, error, attempts, created_at,
		record_timestamp, fingerprint)
	SELECT (ARRAY['herald.notifications.v1', 'product.inventory.v1', 'herald.interests.v1'])[1 + g % 3], g % 6, g,
		(ARRAY['notifications', 'events', 'interests'])[1 + g % 3], convert_to('k' || g, 'UTF8'),
		convert_to('{"user_id": "user-' || g || '"}', 'UTF8'), NULL,
		(ARRAY['decode: unexpected end of JSON input', 'unknown user', 'render: missing key product_name'])[1 + g % 3],
		3, to_timestamp(:start + g * 129), to_timestamp(:start + g * 129), md5('dead-' || g)
	FROM generate_series(1, 20000) g;

-- The delivery rollup the overview reads, when this schema has it: the
-- last two days, minute by minute, as one instance would have flushed it.
DO $$ BEGIN
	IF to_regclass('herald.delivery_minutes') IS NOT NULL THEN
		INSERT INTO delivery_minutes (minute, instance, channel, outcome, error_code, count)
			SELECT date_trunc('minute', now()) - m * interval '1 minute', 'consolefill', c, o,
				CASE WHEN o = 'failed' THEN 'UNREGISTERED' ELSE '' END,
				CASE WHEN o = 'sent' THEN 120 + (m * 37) % 60 ELSE 3 + m % 5 END
			FROM generate_series(1, 2880) m, unnest(ARRAY['push', 'email', 'sms', 'in_app']) c,
				unnest(ARRAY['sent', 'failed']) o;
	END IF;
END $$;
