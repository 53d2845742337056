-- orders.<status>: orders by their current status; orders.gross_volume_cents: the totals of
-- completed orders (an order completes once). Kept like the other admin statistics (0014).
CREATE OR REPLACE FUNCTION "orders_stat_counters"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP <> 'INSERT' THEN
		PERFORM "stat_count"('orders.' || OLD."status", -1);
	END IF;
	PERFORM "stat_count"('orders.' || NEW."status", 1);
	IF NEW."status" = 'completed' AND (TG_OP = 'INSERT' OR OLD."status" <> 'completed') THEN
		PERFORM "stat_count"('orders.gross_volume_cents', NEW."total_cents");
	END IF;
	RETURN NULL;
END $$;--> statement-breakpoint
DROP TRIGGER IF EXISTS "orders_stat_counters" ON "orders";--> statement-breakpoint
CREATE TRIGGER "orders_stat_counters" AFTER INSERT ON "orders" FOR EACH ROW EXECUTE FUNCTION "orders_stat_counters"();--> statement-breakpoint
DROP TRIGGER IF EXISTS "orders_stat_counters_update" ON "orders";--> statement-breakpoint
CREATE TRIGGER "orders_stat_counters_update" AFTER UPDATE OF "status" ON "orders" FOR EACH ROW
	WHEN (OLD."status" IS DISTINCT FROM NEW."status")
	EXECUTE FUNCTION "orders_stat_counters"();--> statement-breakpoint

-- Start from the orders already there (running this again recounts).
DELETE FROM "stat_counter_deltas" WHERE "name" LIKE 'orders.%';--> statement-breakpoint
DELETE FROM "stat_counters" WHERE "name" LIKE 'orders.%';--> statement-breakpoint
INSERT INTO "stat_counters" ("name", "value")
	SELECT 'orders.' || "status", count(*) FROM "orders" GROUP BY "status"
	UNION ALL SELECT 'orders.gross_volume_cents', coalesce(sum("total_cents"), 0) FROM "orders" WHERE "status" = 'completed';
