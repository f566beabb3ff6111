#!/usr/bin/env bash
# Citus schema-based sharding, step 2: register the worker nodes with the coordinator.
#   COORDINATOR_URL=postgresql://postgres@coordinator:5432/holiday infra/citus/02-add-workers.sh worker-1:5432 worker-2:5432
set -euo pipefail
: "${COORDINATOR_URL:?set COORDINATOR_URL (a direct superuser connection to the coordinator, not PgBouncer)}"
[ "$#" -gt 0 ] || { echo "usage: $0 host:port..." >&2; exit 2; }
psql "$COORDINATOR_URL" -v ON_ERROR_STOP=1 -qc "select citus_set_coordinator_host('$(hostname -f)', 5432)" >/dev/null 2>&1 || true
for node in "$@"; do
  host=${node%:*}; port=${node##*:}
  psql "$COORDINATOR_URL" -v ON_ERROR_STOP=1 -v host="$host" -v port="$port" \
    -c "select citus_add_node(:'host', :'port'::int)"
done
psql "$COORDINATOR_URL" -c "select nodename, nodeport, noderole, isactive from pg_dist_node order by nodeid"
