DROP INDEX "ledger_accounts_platform_kind_idx";--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD COLUMN "sub_account" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_accounts_platform_kind_sub_account_idx" ON "ledger_accounts" USING btree ("kind","sub_account") WHERE "ledger_accounts"."owner_id" is null;--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_sub_account_platform_only" CHECK ("ledger_accounts"."sub_account" >= 0 and ("ledger_accounts"."owner_id" is null or "ledger_accounts"."sub_account" = 0));--> statement-breakpoint
-- The platform's existing accounts become sub-account 0, keeping their balances and entries; sub-accounts 1 to 15 open at zero, so each total is unchanged.
INSERT INTO "ledger_accounts" ("id", "owner_id", "kind", "sub_account", "balance_cents", "created_at")
	SELECT gen_random_uuid(), NULL, k.kind, n, 0, now() FROM (VALUES ('revenue'), ('external')) AS k(kind) CROSS JOIN generate_series(1, 15) AS n
	ON CONFLICT DO NOTHING;--> statement-breakpoint
DROP FUNCTION "ledger_transfer"(uuid, text, uuid, text, bigint, uuid, uuid, uuid, text, text, uuid, uuid, uuid, timestamptz);--> statement-breakpoint
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
--> statement-breakpoint
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
