-- Every claim and every outcome rewrites a delivery row, and PostgreSQL
-- cannot make those updates HOT (they change state, which the partial
-- indexes are defined on): each rewrite inserts into every index of the
-- table. deliveries_user_id cost three index insertions per delivery for
-- a listing filter that the notifications' own user index answers as
-- well (a delivery's user is its notification's). Dropping it: +16 %
-- deliveries/s in herald bench on PostgreSQL (docs/PERFORMANCE.md).
DROP INDEX deliveries_user_id;
