-- Citus schema-based sharding, step 1: on the coordinator, in the service's database, as a superuser.
--   psql "$COORDINATOR_URL" -v ON_ERROR_STOP=1 -f infra/citus/01-coordinator.sql
-- Citus >= 12.0 (schema-based sharding). The worker nodes are added with 02-add-workers.sh.
create extension if not exists citus;

-- control (the registry) and pgboss (the job queue) stay on the coordinator as plain local schemas: they
-- are created here, before schema-based sharding is switched on for the database, so they are not
-- distributed. (The service creates them with `create schema if not exists`, a no-op from now on.)
set citus.enable_schema_based_sharding to off;
create schema if not exists control;
create schema if not exists pgboss;

-- From now on every new schema (`tenant add` creates t_<slug>) is a distributed schema: all its tables
-- live together on one node, chosen by Citus.
do $$ begin
  execute format('alter database %I set citus.enable_schema_based_sharding to on', current_database());
end $$;
