-- The reminder claim becomes a HOT update (issue 19 item 10,
-- docs/PERFORMANCE.md session 10). A claim writes only lease_owner and
-- lease_until. PostgreSQL updates a row without touching its indexes (a
-- heap-only tuple) when no indexed column changes and the new version
-- fits on the row's page; before this migration neither held, so each
-- claim wrote a new entry into every index of reminders, and left a second
-- dead entry per reminder at the head of reminders_due for every later
-- claim to step over.
--
-- 1. No index names a lease column. reminders_leased served only
--    NextReminderAt's earliest lease end; NextReminderAt now finds leased
--    reminders through reminders_due (a claim leaves next_at alone, and
--    a lease ends after its reminder's next_at, so only the leased
--    reminders due before the earliest unleased one can come first).
DROP INDEX reminders_leased;

-- 2. Room on each page for the claim's new versions. Reminders made
--    together (an import, one PUT per user from one job) share pages and
--    fall due together (09:00 for a million users), so a claim takes a
--    page's rows in one statement, and each needs room on that page for
--    its new version until the claim commits and the old ones can be
--    pruned: at a fillfactor of f, about (100 - f) / f of them fit. At
--    50, all of them; at 80, a quarter (measured: 28 % of a million claims
--    were HOT at 80, 94 % at 50). The price is a table twice the size of
--    a full one for the rows written after this migration; existing pages
--    keep their rows until they are rewritten (VACUUM FULL, or as rows
--    move away when updated).
ALTER TABLE reminders SET (fillfactor = 50);
