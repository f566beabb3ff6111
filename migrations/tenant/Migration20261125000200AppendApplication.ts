import { Migration } from '@mikro-orm/migrations';

// A new application in one statement (issue 10.1, the opening rush; src/resources/attendances/writes.ts
// `appendApplication`). Called on its own (autocommit), so the offer's row lock lives exactly as long as this
// function runs: no round trip to the API process happens while it is held. Runs with search_path set to the
// tenant's schema, which the function keeps (`set search_path from current`).
//
// The caller decided everything that does not depend on the places taken before the call (the two possible
// outcomes, with a place free and without, by the domain rules: decision, reason, charge, e-mail); the function
// - takes the participant's key-share lock (a retention run pseudonymising it waits, or has committed: then
//   nothing is written), with a running phase's maxApplications the child's advisory lock and its count (D4;
//   answered with the count when no application may be added), and the offer's row lock (`for no key update`, as every participant-list write does),
//   checking that the offer is still as the caller read it (edition, fee, cancelled, name);
// - counts in a statement of its own, so on a snapshot taken after the lock (READ COMMITTED: each statement of a
//   function sees what committed before it started);
// - appends the application at the end of its group (D10: the rows behind it move down by one) when the list is
//   numbered 1..n in list order, as every write leaves it;
// - posts the charge (debtor and ledger made when missing) and the family's outbox row;
// - records the `attendance.created` event (issue 14; same payload as src/platform/events/payloads.ts) and says
//   whether the tenant has an enabled webhook, so the caller wakes the delivery.
// It returns null, having written nothing, when any of this does not hold (no such participant or offer, the
// offer changed, the list not numbered 1..n, an application of the participant for the offer exists): the
// caller then takes the general way in a transaction of its own.
export class Migration20261125000200AppendApplication extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create function append_application(p jsonb) returns jsonb language plpgsql
      set search_path from current as $fn$
    declare
      v_offer uuid := (p->>'offer')::uuid;
      v_participant uuid := (p->>'participant')::uuid;
      v_uuid uuid := (p->>'uuid')::uuid;
      v_edition uuid := (p->>'edition')::uuid;
      v_groups text[] := array(select jsonb_array_elements_text(p->'groups'));
      v_free_group int := coalesce(array_position(v_groups, p->'placeFree'->>'status') - 1, cardinality(v_groups));
      v_full_group int := coalesce(array_position(v_groups, p->'full'->>'status') - 1, cardinality(v_groups));
      v_max int;
      v_outcome jsonb;
      v_sorting int;
      v_debtor uuid;
      v_ledger uuid;
      v_counted int;
      v_free boolean;
      v_subscribed boolean;
    begin
      perform 1 from participants where uuid = v_participant and pseudonymised_at is null for key share;
      if not found then return null; end if;
      -- D4 maxApplications: the child's creations take turns on a lock of their own, before the offer's.
      if p->>'limit' is not null then
        perform pg_advisory_xact_lock(hashtextextended(p->>'limitLock', 0));
        select count(*) into v_counted from attendances a join offers o on o.uuid = a.offer_uuid
          where a.participant_uuid = v_participant and o.edition_uuid = v_edition
            and a.status <> all(array(select jsonb_array_elements_text(p->'notCounted')));
        -- exceedsApplicationLimit (src/domain/edition-phases.ts); the caller answers 422.
        if v_counted >= (p->>'limit')::int then return jsonb_build_object('counted', v_counted); end if;
      end if;
      select max_participants into v_max from offers
        where uuid = v_offer and edition_uuid = v_edition and coalesce(fee, 0) = (p->>'fee')::int
          and ('cancelled' = any(places)) = (p->>'cancelled')::boolean and name = p->>'name'
        for no key update;
      if not found then return null; end if;

      with a as (
        select status, sorting, coalesce(array_position(v_groups, status) - 1, cardinality(v_groups)) as g
        from attendances where offer_uuid = v_offer
      ), c as (
        select count(*) filter (where status = 'confirmed') as confirmed, count(*) as n, count(sorting) as numbered,
          coalesce(max(sorting), 0) as top,
          count(*) filter (where g <= v_free_group) as ahead_free, coalesce(max(sorting) filter (where g <= v_free_group), 0) as top_free,
          count(*) filter (where g <= v_full_group) as ahead_full, coalesce(max(sorting) filter (where g <= v_full_group), 0) as top_full
        from a
      ), d as (
        select (v_max is null or c.confirmed < v_max) as free, c.* from c where c.numbered = c.n and c.top = c.n
      )
      select case when d.free then p->'placeFree' else p->'full' end,
        (case when d.free then d.ahead_free else d.ahead_full end + 1)::int, d.free
      into v_outcome, v_sorting, v_free
      from d where case when d.free then d.top_free = d.ahead_free else d.top_full = d.ahead_full end;
      if v_outcome is null then return null; end if;

      insert into attendances (uuid, offer_uuid, participant_uuid, status, sorting, held_back, decision_reason,
        all_alternate_dates, created_by_admin, fee, confirmed_at, status_changed_at, created_at, modified_at)
      values (v_uuid, v_offer, v_participant, v_outcome->>'status', v_sorting, (p->>'heldBack')::boolean,
        v_outcome->>'decisionReason', (p->>'allAlternateDates')::boolean, true, (p->>'fee')::int,
        case when v_outcome->>'status' = 'confirmed' then now() end, now(), now(), now())
      on conflict (offer_uuid, participant_uuid) do nothing;
      if not found then return null; end if;
      -- The rows behind it (later groups, D10) move down by one; they count as modified (modifiedSince).
      update attendances set sorting = sorting + 1, modified_at = now()
        where offer_uuid = v_offer and sorting >= v_sorting and uuid <> v_uuid;

      if (v_outcome->>'charge')::int <> 0 then
        if p->>'account' is not null then
          insert into debtors (uuid, account_uuid) values ((p->>'debtorUuid')::uuid, (p->>'account')::uuid)
            on conflict (account_uuid) where account_uuid is not null do nothing;
          select uuid into v_debtor from debtors where account_uuid = (p->>'account')::uuid;
        else
          insert into debtors (uuid, participant_uuid) values ((p->>'debtorUuid')::uuid, v_participant)
            on conflict (participant_uuid) where participant_uuid is not null do nothing;
          select uuid into v_debtor from debtors where participant_uuid = v_participant;
        end if;
        insert into ledgers (uuid, debtor_uuid, edition_uuid) values ((p->>'ledgerUuid')::uuid, v_debtor, v_edition)
          on conflict (debtor_uuid, edition_uuid) do nothing;
        select uuid into v_ledger from ledgers where debtor_uuid = v_debtor and edition_uuid = v_edition;
        insert into bookings (uuid, ledger_uuid, type, amount, text, attendance_uuid)
          values ((p->>'bookingUuid')::uuid, v_ledger, 'charge', (v_outcome->>'charge')::int, p->>'chargeText', v_uuid);
      end if;

      if jsonb_typeof(v_outcome->'mail') = 'object' then
        insert into outbox (uuid, kind, recipient, subject, body, payload)
          values ((p->>'mailUuid')::uuid, v_outcome->'mail'->>'kind', v_outcome->'mail'->>'recipient',
            v_outcome->'mail'->>'subject', v_outcome->'mail'->>'body', coalesce(v_outcome->'mail'->'payload', '{}'::jsonb));
      end if;
      -- Issue 14: the event in the same statement (never lost, none for nothing written); nulls left out as
      -- recordEvents leaves them out.
      insert into event (uuid, type, data) values ((p->>'eventUuid')::uuid, 'attendance.created', jsonb_strip_nulls(jsonb_build_object(
        'attendance', v_uuid, 'offer', v_offer, 'edition', v_edition, 'participant', v_participant, 'account', p->>'account',
        'status', v_outcome->>'status', 'heldBack', (p->>'heldBack')::boolean, 'decisionReason', v_outcome->>'decisionReason')));
      v_subscribed := exists (select 1 from webhooks where enabled);
      -- \`at\`: its createdAt (= modifiedAt, statusChangedAt, confirmedAt), as the projection reads timestamps.
      return jsonb_build_object('status', v_outcome->>'status', 'placeFree', v_free, 'sorting', v_sorting,
        'mailed', jsonb_typeof(v_outcome->'mail') = 'object', 'subscribed', v_subscribed, 'at', now()::text);
    end
    $fn$`);
  }
}
