-- Citus schema-based sharding, step 3 (once, for a database that already had municipalities before
-- step 1): turns every registered municipality's schema into a distributed schema. Idempotent.
--   psql "$COORDINATOR_URL" -v ON_ERROR_STOP=1 -f infra/citus/03-distribute-existing.sql
-- Each call locks that schema's tables while its data is moved: run it in a quiet hour.
do $$
declare s text;
begin
  for s in
    select t.schema_name from control.tenants t
    where not exists (select 1 from pg_dist_schema d where d.schemaid = t.schema_name::regnamespace)
    order by t.slug
  loop
    raise notice 'distributing %', s;
    perform citus_schema_distribute(s);
  end loop;
end $$;

-- Where each municipality lives now.
select s.schema_name, n.nodename, n.nodeport
from citus_schemas s
left join citus_shards sh on sh.citus_table_type = 'schema' and sh.table_name::text like s.schema_name || '.%'
left join pg_dist_node n on n.nodename = sh.nodename and n.nodeport = sh.nodeport
group by 1, 2, 3 order by 1;
