-- migrate:up
CREATE TABLE sites (
    id           SERIAL PRIMARY KEY,
    customer_id  INTEGER NOT NULL REFERENCES customers(id),
    slug         VARCHAR(40) NOT NULL UNIQUE,
    name         VARCHAR(120) NOT NULL
);
ALTER TABLE devices ADD COLUMN site_id INTEGER REFERENCES sites(id);

-- migrate:down
ALTER TABLE devices DROP COLUMN site_id;
DROP TABLE sites;
