-- A device's last move from one user to another (issue 18): only a server
-- key moves a device; the user it was taken from and when are kept on the
-- device, visible through the API, until the next move.
ALTER TABLE devices ADD COLUMN previous_user_id text NOT NULL DEFAULT '';
ALTER TABLE devices ADD COLUMN reassigned_at timestamptz;
