-- The users check of an enqueue (checkUsers, store/postgres/enqueue.go)
-- runs pipelined with the inserts and the COMMIT after it. It used to
-- report an unknown user only to Herald, which then relied on the
-- notifications' foreign key to fail the transaction too. A user created
-- between the check and the insert (READ COMMITTED: each statement sees
-- the commits before it) passed the foreign key, and the trigger was
-- committed while its caller was told ENOTFOUND — a caller that retried
-- would notify twice. Raising inside the check aborts the transaction in
-- PostgreSQL itself: nothing after it runs, the COMMIT rolls back.
--
-- SQLSTATE HR404 is Herald's own (not a PostgreSQL code); DETAIL is the
-- user id, so the message Herald returns does not depend on the server's
-- language.
CREATE FUNCTION user_not_found(id text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION USING ERRCODE = 'HR404', MESSAGE = 'herald: unknown user', DETAIL = id;
END
$$;
