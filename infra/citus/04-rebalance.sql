-- Citus schema-based sharding: spread the municipalities' schemas evenly over the nodes (background job,
-- online: writes to a schema are blocked only for the final switch-over of that schema).
--   psql "$COORDINATOR_URL" -v ON_ERROR_STOP=1 -f infra/citus/04-rebalance.sql
select citus_rebalance_start();
-- Progress: select * from citus_rebalance_status();
-- One municipality to a chosen node (e.g. a big city on its own machine):
--   select citus_schema_move('t_musterstadt', 'worker-3', 5432);
