#!/bin/sh
# Runs once, when the postgres container initialises an empty data volume (mounted into
# /docker-entrypoint-initdb.d/, run as POSTGRES_USER). One database and one least-privilege login
# role per service: api-service -> database "api" owned by role "hwp_api", collab-service ->
# "collab" owned by "hwp_collab". The roles are no superusers, cannot create databases or roles,
# and only their own database accepts them. Passwords come from API_DB_PASSWORD and
# COLLAB_DB_PASSWORD. Idempotent, so it is also safe to run by hand.
set -eu

psql -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  -v api_password="$API_DB_PASSWORD" -v collab_password="$COLLAB_DB_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT', r)
  FROM unnest(ARRAY['hwp_api', 'hwp_collab']) AS r
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r)\gexec
ALTER ROLE hwp_api PASSWORD :'api_password';
ALTER ROLE hwp_collab PASSWORD :'collab_password';

SELECT 'CREATE DATABASE api OWNER hwp_api'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'api')\gexec
SELECT 'CREATE DATABASE collab OWNER hwp_collab'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'collab')\gexec

REVOKE ALL ON DATABASE api FROM PUBLIC;
REVOKE ALL ON DATABASE collab FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE api TO hwp_api;
GRANT CONNECT, TEMPORARY ON DATABASE collab TO hwp_collab;

-- Each service creates its tables (migrations) in the public schema of its own database.
\connect api
ALTER SCHEMA public OWNER TO hwp_api;
\connect collab
ALTER SCHEMA public OWNER TO hwp_collab;
SQL
