-- Counters of the admin statistics (src/platform/statistics): triggers append deltas in the
-- transaction of the change; the worker folds them into stat_counters.
CREATE OR REPLACE FUNCTION "stat_count"("counter" text, "delta" bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF "delta" <> 0 THEN
		INSERT INTO "stat_counter_deltas" ("name", "delta") VALUES ("counter", "delta");
	END IF;
END $$;--> statement-breakpoint

-- users.total, users.active (activated, not suspended), users.staff (staff or superuser), users.suspended
CREATE OR REPLACE FUNCTION "users_stat_counters"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	old_total int := 0; old_active int := 0; old_staff int := 0; old_suspended int := 0;
	new_total int := 0; new_active int := 0; new_staff int := 0; new_suspended int := 0;
BEGIN
	IF TG_OP <> 'INSERT' THEN
		old_total := 1;
		old_active := (OLD."is_active" AND OLD."suspended_at" IS NULL)::int;
		old_staff := (OLD."is_staff" OR OLD."is_superuser")::int;
		old_suspended := (OLD."suspended_at" IS NOT NULL)::int;
	END IF;
	IF TG_OP <> 'DELETE' THEN
		new_total := 1;
		new_active := (NEW."is_active" AND NEW."suspended_at" IS NULL)::int;
		new_staff := (NEW."is_staff" OR NEW."is_superuser")::int;
		new_suspended := (NEW."suspended_at" IS NOT NULL)::int;
	END IF;
	PERFORM "stat_count"('users.total', new_total - old_total);
	PERFORM "stat_count"('users.active', new_active - old_active);
	PERFORM "stat_count"('users.staff', new_staff - old_staff);
	PERFORM "stat_count"('users.suspended', new_suspended - old_suspended);
	RETURN NULL;
END $$;--> statement-breakpoint
DROP TRIGGER IF EXISTS "users_stat_counters" ON "users";--> statement-breakpoint
CREATE TRIGGER "users_stat_counters" AFTER INSERT OR DELETE OR UPDATE OF "is_active", "is_staff", "is_superuser", "suspended_at" ON "users" FOR EACH ROW EXECUTE FUNCTION "users_stat_counters"();--> statement-breakpoint

-- services.<status>: services not deleted, by status
CREATE OR REPLACE FUNCTION "services_stat_counters"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP <> 'INSERT' AND OLD."deleted_at" IS NULL THEN
		PERFORM "stat_count"('services.' || OLD."status", -1);
	END IF;
	IF TG_OP <> 'DELETE' AND NEW."deleted_at" IS NULL THEN
		PERFORM "stat_count"('services.' || NEW."status", 1);
	END IF;
	RETURN NULL;
END $$;--> statement-breakpoint
DROP TRIGGER IF EXISTS "services_stat_counters" ON "services";--> statement-breakpoint
CREATE TRIGGER "services_stat_counters" AFTER INSERT OR DELETE ON "services" FOR EACH ROW EXECUTE FUNCTION "services_stat_counters"();--> statement-breakpoint
DROP TRIGGER IF EXISTS "services_stat_counters_update" ON "services";--> statement-breakpoint
CREATE TRIGGER "services_stat_counters_update" AFTER UPDATE OF "status", "deleted_at" ON "services" FOR EACH ROW
	WHEN (OLD."status" IS DISTINCT FROM NEW."status" OR OLD."deleted_at" IS DISTINCT FROM NEW."deleted_at")
	EXECUTE FUNCTION "services_stat_counters"();--> statement-breakpoint

-- wallet.escrow_held: the sum of every user's escrow balance, in cents
CREATE OR REPLACE FUNCTION "ledger_escrow_stat_counter"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM "stat_count"('wallet.escrow_held', NEW."balance_cents" - OLD."balance_cents");
	RETURN NULL;
END $$;--> statement-breakpoint
DROP TRIGGER IF EXISTS "ledger_escrow_stat_counter" ON "ledger_accounts";--> statement-breakpoint
CREATE TRIGGER "ledger_escrow_stat_counter" AFTER UPDATE OF "balance_cents" ON "ledger_accounts" FOR EACH ROW
	WHEN (NEW."kind" = 'escrow' AND OLD."balance_cents" IS DISTINCT FROM NEW."balance_cents")
	EXECUTE FUNCTION "ledger_escrow_stat_counter"();--> statement-breakpoint

-- Start from the rows already there (running this again recounts).
DELETE FROM "stat_counter_deltas" WHERE "name" LIKE 'users.%' OR "name" LIKE 'services.%' OR "name" = 'wallet.escrow_held';--> statement-breakpoint
DELETE FROM "stat_counters" WHERE "name" LIKE 'users.%' OR "name" LIKE 'services.%' OR "name" = 'wallet.escrow_held';--> statement-breakpoint
INSERT INTO "stat_counters" ("name", "value")
	SELECT 'users.total', count(*) FROM "users"
	UNION ALL SELECT 'users.active', count(*) FROM "users" WHERE "is_active" AND "suspended_at" IS NULL
	UNION ALL SELECT 'users.staff', count(*) FROM "users" WHERE "is_staff" OR "is_superuser"
	UNION ALL SELECT 'users.suspended', count(*) FROM "users" WHERE "suspended_at" IS NOT NULL
	UNION ALL SELECT 'services.' || "status", count(*) FROM "services" WHERE "deleted_at" IS NULL GROUP BY "status"
	UNION ALL SELECT 'wallet.escrow_held', coalesce(sum("balance_cents"), 0) FROM "ledger_accounts" WHERE "kind" = 'escrow';
