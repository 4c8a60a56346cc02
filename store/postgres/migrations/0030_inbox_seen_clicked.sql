-- The inbox item's seen and clicked state (issue 35 item 1), beside
-- read_at and archived_at: when the item was first shown to the user and
-- first clicked, NULL until then. Each change also writes its receipt
-- (seen, clicked) on the item's in-app delivery's timeline. Nullable
-- columns without a default: no table rewrite.
ALTER TABLE inbox_items ADD COLUMN seen_at timestamptz, ADD COLUMN clicked_at timestamptz;
