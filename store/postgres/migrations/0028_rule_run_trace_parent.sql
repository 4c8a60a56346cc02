-- A rule run keeps the W3C traceparent of the span that applied its event
-- (the request's or the Kafka record's), so each batch the leader's rule
-- runner writes later — on any instance, after a restart too — joins the
-- event's trace, and so do its deliveries' sends (issue 34 item 5). NULL
-- when tracing is off or the trace is not sampled; nullable without a
-- default, the column rewrites no row.
ALTER TABLE rule_runs ADD COLUMN trace_parent text;
