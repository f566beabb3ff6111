import pg from 'pg';

/**
 * Whether a PostgreSQL server answers at `url` within 2 s (a login, then goodbye). Tools that fall back to the
 * embedded PostgreSQL where none answers use it: the test run's global setup and `npm run db:types`.
 */
export async function serverAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}
