-- A rule run keeps the W3C traceparent of the span that applied its event,
-- so the batches the rule runner writes later join the event's trace
-- (issue 34 item 5), as PostgreSQL's 0028. NULL when tracing is off or the
-- trace is not sampled.
ALTER TABLE rule_runs ADD COLUMN trace_parent TEXT;
