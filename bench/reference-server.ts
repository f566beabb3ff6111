import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { servicePoolSize } from './baseline.js';

// The hand-written reference for the public offer list (bench/README.md): plain node:http + pg, the whole
// anonymous `GET /offers` page built as JSON text by ONE SQL query and written out unchanged. Same fields,
// order, null rule (json_strip_nulls = spec 1.6), timestamps in Europe/Berlin with offset (session time
// zone), visibility (published, public, edition online by its show_offers phase, D4) and pagination as the
// app. `vacancies` counts confirmed applications, as the spec's field requires. One tenant, one schema. Its
// pool is the service's size (PG_POOL_SIZE, read as the service reads it; issue 25), unless `poolMax` says otherwise.
//
// Run alone: DATABASE_URL=… SCHEMA=t_bench URL_PREFIX=https://host/angebote/ PORT=8081 tsx bench/reference-server.ts

export type ReferenceOptions = { databaseUrl: string; schema: string; urlPrefix: string; port?: number; poolMax?: number };

const PLACES_ORDER = ['draft', 'completed', 'reviewed', 'published', 'cancelled', 'unpublished'];

export function pageQuery(schema: string): string {
  if (!/^t_[a-z0-9_]{1,60}$/.test(schema)) throw new Error(`invalid schema "${schema}"`);
  const t = (name: string) => `"${schema}"."${name}"`;
  const ts = (col: string) => `to_char(${col}, 'YYYY-MM-DD"T"HH24:MI:SSTZH:TZM')`;
  // The app's default order (D5): first date, then name (German collation), then uuid.
  const order = (begin: string, o: string) => `${begin}.first_begin asc nulls last, ${o}.name collate "de-DE-x-icu" asc, ${o}.uuid`;
  return `
    with page as (
      select o.*, fd.first_begin
      from ${t('offers')} o
      join ${t('editions')} e on e.uuid = o.edition_uuid
      left join lateral (select min(d."begin") as first_begin from ${t('offer_dates')} d where d.offer_uuid = o.uuid) fd on true
      where 'published' = any(o.places) and o.publish = 'public'
        and (case
          when exists (select 1 from ${t('edition_tasks')} gt where gt.edition_uuid = e.uuid and gt.type = 'show_offers')
          then exists (select 1 from ${t('edition_tasks')} gt where gt.edition_uuid = e.uuid and gt.type = 'show_offers'
            and (gt.begin_at is null or gt.begin_at <= now()) and (gt.end_at is null or gt.end_at >= now()))
          else e.online end)
      order by ${order('fd', 'o')}
      limit $1 offset $2
    ), counted as (
      select p.*, case when p.max_participants is null then null else greatest(0, p.max_participants - (
        select count(*)::int from ${t('attendances')} a where a.offer_uuid = p.uuid and a.status = 'confirmed')) end as vacancies
      from page p
    )
    select coalesce(json_agg(json_strip_nulls(json_build_object(
      'uuid', p.uuid, 'name', p.name, 'alias', p.alias,
      'edition', json_build_object('uuid', e.uuid, 'name', e.name, 'alias', e.alias),
      'hosts', coalesce((select json_agg(json_build_object('uuid', g.uuid, 'name', g.name, 'alias', g.alias) order by h.position, g.name)
        from ${t('offer_hosts')} h join ${t('organisers')} g on g.uuid = h.organiser_uuid where h.offer_uuid = p.uuid), '[]'::json),
      'status', to_json(array(select x from unnest($3::text[]) with ordinality u(x, i) where x = any(p.places) order by i)),
      'teaser', p.teaser, 'description', p.description,
      'dates', coalesce((select json_agg(json_build_object('uuid', d.uuid, 'begin', ${ts('d."begin"')}, 'end', ${ts('d."end"')},
          'recurrence', d.recurrence) order by d.position, d."begin")
        from ${t('offer_dates')} d where d.offer_uuid = p.uuid), '[]'::json),
      'fee', p.fee, 'minAge', p.min_age, 'maxAge', p.max_age,
      'minParticipants', p.min_participants, 'maxParticipants', p.max_participants,
      'vacancies', p.vacancies, 'fullyBooked', coalesce(p.vacancies = 0, false),
      'requiresApplication', p.requires_application, 'onlineApplication', p.online_application,
      'applicationDeadline', ${ts('p.application_deadline')}, 'applyText', p.apply_text,
      'meetingPoint', p.meeting_point, 'meetingAddress', p.meeting_address,
      'meetingLat', p.meeting_lat, 'meetingLng', p.meeting_lng, 'bring', p.bring,
      'wheelchairAccessible', p.wheelchair_accessible,
      'categories', coalesce((select json_agg(json_build_object('uuid', c.uuid, 'name', c.name, 'alias', c.alias) order by oc.position, c.name)
        from ${t('offer_categories')} oc join ${t('categories')} c on c.uuid = oc.category_uuid where oc.offer_uuid = p.uuid), '[]'::json),
      'url', $4::text || p.alias,
      'media', p.media,
      'createdAt', ${ts('p.created_at')}, 'modifiedAt', ${ts('p.modified_at')}
    )) order by ${order('p', 'p')}), '[]'::json)::text as body
    from counted p join ${t('editions')} e on e.uuid = p.edition_uuid`;
}

function intParam(value: string | null, min: number, max: number): number | null | undefined {
  if (value === null) return undefined;
  if (!/^\d{1,9}$/.test(value)) return null;
  const n = Number(value);
  return n >= min && n <= max ? n : null;
}

export async function startReferenceServer(opts: ReferenceOptions): Promise<{ port: number; close: () => Promise<void> }> {
  // The session time zone makes to_char's TZH:TZM the Berlin offset of each instant.
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolMax ?? servicePoolSize(), idleTimeoutMillis: 0, options: '-c TimeZone=Europe/Berlin' });
  const text = pageQuery(opts.schema);
  const send = (res: http.ServerResponse, status: number, body: string, type = 'application/json') => {
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': status === 200 ? 'public, max-age=60' : 'no-store' });
    res.end(body);
  };
  const server = http.createServer((req, res) => void (async () => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method !== 'GET' || (url.pathname !== '/api/offers' && url.pathname !== '/offers')) {
      return send(res, 404, '{"status":404,"title":"Not Found"}', 'application/problem+json');
    }
    const page = intParam(url.searchParams.get('page'), 1, 1_000_000);
    const perPage = intParam(url.searchParams.get('itemsPerPage'), 1, 200);
    if (page === null || perPage === null) return send(res, 400, '{"status":400,"title":"Bad Request"}', 'application/problem+json');
    const limit = perPage ?? 30;
    try {
      const r = await pool.query<{ body: string }>({ name: 'offers-page', text, values: [limit, ((page ?? 1) - 1) * limit, PLACES_ORDER, opts.urlPrefix] });
      send(res, 200, r.rows[0].body);
    } catch (err) {
      console.error(err);
      send(res, 500, '{"status":500,"title":"Internal Server Error"}', 'application/problem+json');
    }
  })());
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = process.env;
  const ref = await startReferenceServer({
    databaseUrl: env.DATABASE_URL!, schema: env.SCHEMA!, urlPrefix: env.URL_PREFIX!, port: Number(env.PORT ?? 0),
  });
  console.log(`listening ${ref.port}`);
  const stop = () => void ref.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
