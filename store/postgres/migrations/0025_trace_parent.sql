-- A notification keeps the W3C traceparent of the span that enqueued it,
-- so the worker that claims its deliveries later continues the same trace
-- (issue 34 item 5). NULL when tracing is off or the trace is not sampled:
-- adding a nullable column without a default rewrites no row, and a NULL
-- costs the claim nothing to read.
ALTER TABLE notifications ADD COLUMN trace_parent text;
