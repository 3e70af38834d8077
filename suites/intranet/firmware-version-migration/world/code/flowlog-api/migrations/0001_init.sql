-- migrate:up
CREATE TABLE customers (
    id          SERIAL PRIMARY KEY,
    name        VARCHAR(120) NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE devices (
    id           SERIAL PRIMARY KEY,
    customer_id  INTEGER NOT NULL REFERENCES customers(id),
    serial       VARCHAR(16) NOT NULL UNIQUE,
    kind         VARCHAR(8) NOT NULL CHECK (kind IN ('S2', 'HUB')),
    installed_at DATE
);

CREATE TABLE readings (
    device_id  INTEGER NOT NULL REFERENCES devices(id),
    taken_at   TIMESTAMPTZ NOT NULL,
    parameter  VARCHAR(24) NOT NULL,
    value      DOUBLE PRECISION NOT NULL
);

-- migrate:down
DROP TABLE readings;
DROP TABLE devices;
DROP TABLE customers;
