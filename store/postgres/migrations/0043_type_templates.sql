-- Notification types' message templates (issue 37 item 6): every saved
-- version is a row, never updated, so a notification's recorded version
-- still shows what rendered it. The type need not be declared through the
-- API (a type of the configuration file, or an undeclared one, may carry
-- templates), so no foreign key. Saves of one type take the next version
-- one at a time, under an advisory lock of the type (templates.go).
CREATE TABLE type_templates (
	type       text NOT NULL,
	version    integer NOT NULL,
	templates  jsonb NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (type, version)
);
