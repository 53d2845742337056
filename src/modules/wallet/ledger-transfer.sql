-- One ledger transfer in one round trip (ledger.repository.ts calls it with named arguments):
-- both accounts locked in id order (two transfers over the same accounts cannot deadlock), the
-- source's balance checked under the lock (a user's account never goes below zero; the
-- platform's may), both balances moved, and the transaction row inserted with its two entries
-- and the balances after. When an account is missing or the balance is short, nothing is
-- written and the answer says so. Each statement here sees what committed before it ran, as
-- separate statements from the application would (a single data-modifying CTE would not: its
-- UPDATE can act on the row version of the statement's start, not the one its lock waited for).
-- A platform side uses the sub-account `platform_sub_account` of its account (decision 0186).
CREATE OR REPLACE FUNCTION public.ledger_transfer(from_owner uuid, from_kind text, to_owner uuid, to_kind text, amount bigint, txn_id uuid, source_entry uuid, target_entry uuid, txn_type text, txn_description text, for_order uuid, for_payout uuid, for_deposit uuid, booked_at timestamp with time zone, platform_sub_account integer, OUT accounts_found boolean, OUT source_balance bigint, OUT moved boolean)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
	source_id uuid;
	target_id uuid;
	source_after bigint;
	target_after bigint;
BEGIN
	accounts_found := false;
	source_balance := 0;
	moved := false;
	IF from_owner IS NULL THEN
		source_id := ledger_platform_account(from_kind, platform_sub_account, booked_at);
	ELSE
		SELECT a."id" INTO source_id FROM "ledger_accounts" a WHERE a."owner_id" = from_owner AND a."kind" = from_kind;
	END IF;
	IF to_owner IS NULL THEN
		target_id := ledger_platform_account(to_kind, platform_sub_account, booked_at);
	ELSE
		SELECT a."id" INTO target_id FROM "ledger_accounts" a WHERE a."owner_id" = to_owner AND a."kind" = to_kind;
	END IF;
	IF source_id IS NULL OR target_id IS NULL THEN
		RETURN;
	END IF;
	accounts_found := true;

	PERFORM 1 FROM "ledger_accounts" a WHERE a."id" IN (source_id, target_id) ORDER BY a."id" FOR UPDATE;
	SELECT a."balance_cents" INTO source_balance FROM "ledger_accounts" a WHERE a."id" = source_id;
	IF from_owner IS NOT NULL AND source_balance < amount THEN
		RETURN;
	END IF;

	UPDATE "ledger_accounts" a SET "balance_cents" = a."balance_cents" - amount WHERE a."id" = source_id RETURNING a."balance_cents" INTO source_after;
	UPDATE "ledger_accounts" a SET "balance_cents" = a."balance_cents" + amount WHERE a."id" = target_id RETURNING a."balance_cents" INTO target_after;
	INSERT INTO "ledger_transactions" ("id", "type", "description", "order_id", "payout_id", "deposit_id", "created_at")
		VALUES (txn_id, txn_type, txn_description, for_order, for_payout, for_deposit, booked_at);
	INSERT INTO "ledger_entries" ("id", "transaction_id", "account_id", "amount_cents", "balance_after_cents", "created_at")
		VALUES (source_entry, txn_id, source_id, -amount, source_after, booked_at), (target_entry, txn_id, target_id, amount, target_after, booked_at);
	moved := true;
END $function$;
-- The id of a platform account's sub-account, opened at zero on first use: a deployment that
-- raises the number of sub-accounts needs no migration. Concurrent openers insert one row (the
-- unique index; the loser waits for the winner's commit and then reads its row).
CREATE OR REPLACE FUNCTION public.ledger_platform_account(platform_kind text, part integer, opened_at timestamp with time zone)
 RETURNS uuid
 LANGUAGE plpgsql
AS $function$
DECLARE
	found_id uuid;
BEGIN
	SELECT a."id" INTO found_id FROM "ledger_accounts" a WHERE a."owner_id" IS NULL AND a."kind" = platform_kind AND a."sub_account" = part;
	IF found_id IS NULL AND platform_kind IN ('revenue', 'external') THEN
		INSERT INTO "ledger_accounts" ("id", "owner_id", "kind", "sub_account", "balance_cents", "created_at")
			VALUES (gen_random_uuid(), NULL, platform_kind, part, 0, opened_at) ON CONFLICT DO NOTHING;
		SELECT a."id" INTO found_id FROM "ledger_accounts" a WHERE a."owner_id" IS NULL AND a."kind" = platform_kind AND a."sub_account" = part;
	END IF;
	RETURN found_id;
END $function$;
