-- migrate:up
ALTER TABLE readings ADD COLUMN hub_id INTEGER REFERENCES devices(id);

-- migrate:down
ALTER TABLE readings DROP COLUMN hub_id;
