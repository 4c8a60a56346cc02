-- The notifications lose their foreign key to users, as the queue's tables
-- lost theirs (0007). A foreign key is checked by a trigger per inserted
-- row: an index lookup and a KEY SHARE row lock through SPI, a third of
-- the instructions of the INSERT of a notification (callgrind, PERFORMANCE
-- session 9). Every notification is written after the enqueue's users
-- check (checkUsers, store/postgres/enqueue.go) in the same transaction,
-- which now takes that same KEY SHARE lock on each user in one statement:
-- an unknown user still aborts the trigger, and a user cannot be deleted
-- between the check and the COMMIT.
ALTER TABLE notifications DROP CONSTRAINT notifications_user_id_fkey;

-- ON DELETE CASCADE is kept by a statement trigger: Herald deletes no
-- user, but a user deleted out of band takes their notifications (and,
-- through theirs, the inbox items) with them, as before. search_path is
-- the schema's, fixed when the function is created (Migrate runs with it).
CREATE FUNCTION delete_users_notifications() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	DELETE FROM notifications n USING deleted_users d WHERE n.user_id = d.id;
	RETURN NULL;
END
$$;

CREATE TRIGGER users_delete_notifications AFTER DELETE ON users
	REFERENCING OLD TABLE AS deleted_users
	FOR EACH STATEMENT EXECUTE FUNCTION delete_users_notifications();
