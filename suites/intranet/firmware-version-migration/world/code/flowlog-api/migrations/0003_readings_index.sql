-- migrate:up
CREATE INDEX readings_device_time ON readings (device_id, taken_at);

-- migrate:down
DROP INDEX readings_device_time;
