-- The hot tables lose their foreign keys. A foreign key is checked by a
-- trigger per inserted row (an index lookup and a row lock on the
-- referenced row): per delivery, once at enqueue (deliveries ->
-- notifications) and once per attempt row (delivery_attempts ->
-- deliveries). Herald writes both in the same statement or transaction
-- as the row they refer to, and retention (PruneFinished) deletes a
-- notification's deliveries and attempt rows itself instead of through
-- ON DELETE CASCADE. herald bench on PostgreSQL: +14-22 % deliveries/s
-- (docs/PERFORMANCE.md).
ALTER TABLE delivery_attempts DROP CONSTRAINT delivery_attempts_delivery_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_notification_id_fkey;
