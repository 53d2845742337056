-- orders.<status> of the admin statistics: orders by their current status; and
-- orders.gross_volume_cents: what buyers paid for completed orders, their totals less what went
-- back to the buyer (partial refunds and a split's refund before completion, counted when the
-- order completes; a staff refund after completion, counted when it is made).
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
CREATE TRIGGER orders_stat_counters AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION orders_stat_counters();
CREATE TRIGGER orders_stat_counters_update AFTER UPDATE OF status, refunded_cents ON orders FOR EACH ROW WHEN (old.status IS DISTINCT FROM new.status OR old.refunded_cents IS DISTINCT FROM new.refunded_cents) EXECUTE FUNCTION orders_stat_counters();
