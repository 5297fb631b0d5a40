-- Runs once, when the postgres container initialises an empty data volume
-- (mounted into /docker-entrypoint-initdb.d/, executed by psql as POSTGRES_USER).
-- One database per service: api-service -> "api", collab-service -> "collab".
-- Idempotent (\gexec only runs CREATE DATABASE for the missing ones), so it is also
-- safe to run by hand:  psql -U postgres -f infra/postgres/init.sql

SELECT 'CREATE DATABASE api'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'api')\gexec

SELECT 'CREATE DATABASE collab'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'collab')\gexec
