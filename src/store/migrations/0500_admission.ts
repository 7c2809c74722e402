/**
 * Admission in one statement: `recognition_admit(...)` claims a sync request's idempotency
 * slot, reserves quota, debits the balance and inserts the request rows (each carrying the
 * month it was charged in) in one transaction. A crash at any point leaves either nothing or
 * rows that record their charge, which every way of ending a request refunds exactly once
 * (0200_charging). One round trip instead of four.
 *
 * Lock order is key_usage, then organizations, the same as the refund in endRequests, so the
 * two never deadlock. The request ids come from the caller, which makes a repeated call
 * (after a connection lost mid-way) return the rows it already wrote instead of charging twice.
 *
 * Result (jsonb):
 *   {"outcome":"admitted","requests":[row...]}   charged, rows inserted (or found: a repeat)
 *   {"outcome":"existing","request":row|null}    sync only: a live request holds the external_id
 *                                                (null: it ended ERROR meanwhile), nothing charged
 *   {"outcome":"quota","used":n}                 quota would be exceeded, nothing charged
 *   {"outcome":"balance"}                        balance short (or organisation gone), nothing charged
 */
import type { Knex } from 'knex';

const ADMIT = `
CREATE OR REPLACE FUNCTION recognition_admit(
  p_key uuid, p_org uuid, p_month text, p_quota integer, p_status text, p_instance text,
  p_idempotent boolean, p_requests jsonb
) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  v_units integer := jsonb_array_length(p_requests);
  v_ids uuid[] := ARRAY(SELECT (e->>'id')::uuid FROM jsonb_array_elements(p_requests) e);
  v_used integer;
  v_balance bigint;
  v_rows jsonb;
  v_live jsonb;
BEGIN
  -- A repeat of a call that already committed (its answer was lost): the same rows, no new charge.
  SELECT jsonb_agg(to_jsonb(r)) INTO v_rows FROM requests r WHERE r.id = ANY (v_ids);
  IF v_rows IS NOT NULL THEN
    RETURN jsonb_build_object('outcome', 'admitted', 'requests', v_rows);
  END IF;

  -- Idempotency: a live sync request holding (key, external_id) is answered as it is, free.
  IF p_idempotent THEN
    SELECT to_jsonb(r) INTO v_live FROM requests r
      WHERE r.key_id = p_key AND r.kind = 'sync' AND r.external_id = p_requests->0->>'external_id' AND r.status <> 'ERROR';
    IF v_live IS NOT NULL THEN
      RETURN jsonb_build_object('outcome', 'existing', 'request', v_live);
    END IF;
  END IF;

  -- Quota: a conditional upsert; the row lock serialises competitors, the WHERE re-checks the latest count.
  IF v_units > p_quota THEN
    SELECT used INTO v_used FROM key_usage WHERE key_id = p_key AND month = p_month;
    RETURN jsonb_build_object('outcome', 'quota', 'used', coalesce(v_used, 0));
  END IF;
  INSERT INTO key_usage AS u (key_id, month, used) VALUES (p_key, p_month, v_units)
    ON CONFLICT (key_id, month) DO UPDATE SET used = u.used + EXCLUDED.used, updated_at = now()
    WHERE u.used + EXCLUDED.used <= p_quota
    RETURNING used INTO v_used;
  IF NOT FOUND THEN
    SELECT used INTO v_used FROM key_usage WHERE key_id = p_key AND month = p_month;
    RETURN jsonb_build_object('outcome', 'quota', 'used', coalesce(v_used, 0));
  END IF;

  -- Balance: NULL is unlimited (and takes no lock); otherwise a conditional debit, never below zero.
  SELECT balance INTO v_balance FROM organizations WHERE id = p_org;
  IF NOT FOUND THEN
    UPDATE key_usage SET used = used - v_units WHERE key_id = p_key AND month = p_month;
    RETURN jsonb_build_object('outcome', 'balance');
  END IF;
  IF v_balance IS NOT NULL THEN
    UPDATE organizations SET balance = balance - v_units WHERE id = p_org AND balance >= v_units;
    IF NOT FOUND THEN
      UPDATE key_usage SET used = used - v_units WHERE key_id = p_key AND month = p_month;
      RETURN jsonb_build_object('outcome', 'balance');
    END IF;
  END IF;

  -- The rows, each recording the month it was charged in. A sync insert that loses the race for
  -- its external_id (another claim committed after our check) inserts nothing.
  WITH ins AS (
    INSERT INTO requests (id, key_id, org_id, kind, external_id, source, source_url, image_fingerprint,
                          instance_id, status, started_at, image_stored, charge_month)
    SELECT e.id, p_key, p_org, e.kind, e.external_id, e.source, e.source_url, e.image_fingerprint,
           p_instance, p_status, CASE WHEN p_status = 'PROCESSING' THEN now() END, true, p_month
    FROM jsonb_to_recordset(p_requests)
      AS e(id uuid, kind text, external_id text, source text, source_url text, image_fingerprint text)
    ON CONFLICT (key_id, external_id) WHERE kind = 'sync' AND status <> 'ERROR' DO NOTHING
    RETURNING *
  )
  SELECT jsonb_agg(to_jsonb(ins)) INTO v_rows FROM ins;

  IF v_rows IS NULL OR jsonb_array_length(v_rows) < v_units THEN
    -- Only a sync claim can lose that race: give back what was taken, answer with the holder.
    UPDATE key_usage SET used = used - v_units WHERE key_id = p_key AND month = p_month;
    UPDATE organizations SET balance = balance + v_units WHERE id = p_org AND balance IS NOT NULL;
    SELECT to_jsonb(r) INTO v_live FROM requests r
      WHERE r.key_id = p_key AND r.kind = 'sync' AND r.external_id = p_requests->0->>'external_id' AND r.status <> 'ERROR';
    RETURN jsonb_build_object('outcome', 'existing', 'request', v_live);
  END IF;
  RETURN jsonb_build_object('outcome', 'admitted', 'requests', v_rows);
END
$fn$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(ADMIT);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS recognition_admit(uuid, uuid, text, integer, text, text, boolean, jsonb)');
}
