-- A staff refund of a completed order lowers the gross volume when it is made (see src/modules/orders/orders-stat-counters.sql).
CREATE OR REPLACE FUNCTION public.orders_stat_counters()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	IF TG_OP = 'INSERT' OR OLD."status" IS DISTINCT FROM NEW."status" THEN
		IF TG_OP <> 'INSERT' THEN
			PERFORM "stat_count"('orders.' || OLD."status", -1);
		END IF;
		PERFORM "stat_count"('orders.' || NEW."status", 1);
		IF NEW."status" = 'completed' THEN
			PERFORM "stat_count"('orders.gross_volume_cents', NEW."total_cents" - NEW."refunded_cents");
		END IF;
	ELSIF NEW."status" = 'completed' THEN
		PERFORM "stat_count"('orders.gross_volume_cents', OLD."refunded_cents" - NEW."refunded_cents");
	END IF;
	RETURN NULL;
END $function$;
--> statement-breakpoint
DROP TRIGGER "orders_stat_counters_update" ON "orders";--> statement-breakpoint
CREATE TRIGGER orders_stat_counters_update AFTER UPDATE OF status, refunded_cents ON orders FOR EACH ROW WHEN (old.status IS DISTINCT FROM new.status OR old.refunded_cents IS DISTINCT FROM new.refunded_cents) EXECUTE FUNCTION orders_stat_counters();--> statement-breakpoint
-- Recount the gross volume, so refunds staff made after completion before this change count too.
DELETE FROM "stat_counter_deltas" WHERE "name" = 'orders.gross_volume_cents';--> statement-breakpoint
DELETE FROM "stat_counters" WHERE "name" = 'orders.gross_volume_cents';--> statement-breakpoint
INSERT INTO "stat_counters" ("name", "value")
	SELECT 'orders.gross_volume_cents', coalesce(sum("total_cents" - "refunded_cents"), 0) FROM "orders" WHERE "status" = 'completed';
