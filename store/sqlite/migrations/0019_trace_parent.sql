-- A notification keeps the W3C traceparent of the span that enqueued it,
-- so the worker that claims its deliveries later continues the same trace
-- (issue 34 item 5), as PostgreSQL's 0025. NULL when tracing is off or the
-- trace is not sampled.
ALTER TABLE notifications ADD COLUMN trace_parent TEXT;
