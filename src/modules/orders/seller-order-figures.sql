-- seller_order_figures: per seller, the completed and cancelled orders, the orders with a first
-- delivery that are not in dispute now, and of those the ones first delivered by their due time
-- (the lifetime figures sellerPerformanceOf computes from the rows). A change of an order's status
-- or due time moves its share, and its first delivery adds it to the delivered ones; a placement
-- (an open order, no delivery) changes nothing. Orders are never deleted.
CREATE OR REPLACE FUNCTION public.seller_order_figures_add(seller uuid, completed_by integer, cancelled_by integer, delivered_by integer, on_time_by integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
	IF "completed_by" <> 0 OR "cancelled_by" <> 0 OR "delivered_by" <> 0 OR "on_time_by" <> 0 THEN
		INSERT INTO "seller_order_figures" AS f ("seller_id", "completed", "cancelled", "delivered", "on_time")
			VALUES ("seller", "completed_by", "cancelled_by", "delivered_by", "on_time_by")
			ON CONFLICT ("seller_id") DO UPDATE SET "completed" = f."completed" + excluded."completed", "cancelled" = f."cancelled" + excluded."cancelled",
				"delivered" = f."delivered" + excluded."delivered", "on_time" = f."on_time" + excluded."on_time";
	END IF;
END $function$;
CREATE OR REPLACE FUNCTION public.seller_order_figures_of_orders()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
	first_delivery timestamptz;
BEGIN
	IF TG_OP = 'INSERT' THEN
		PERFORM "seller_order_figures_add"(NEW."seller_id", (NEW."status" = 'completed')::int, (NEW."status" = 'cancelled')::int, 0, 0);
		RETURN NULL;
	END IF;
	SELECT min(d."created_at") INTO first_delivery FROM "order_deliveries" d WHERE d."order_id" = NEW."id";
	PERFORM "seller_order_figures_add"(NEW."seller_id",
		(NEW."status" = 'completed')::int - (OLD."status" = 'completed')::int,
		(NEW."status" = 'cancelled')::int - (OLD."status" = 'cancelled')::int,
		(first_delivery IS NOT NULL AND NEW."status" <> 'disputed')::int - (first_delivery IS NOT NULL AND OLD."status" <> 'disputed')::int,
		(NEW."status" <> 'disputed' AND coalesce(first_delivery <= NEW."due_at", false))::int - (OLD."status" <> 'disputed' AND coalesce(first_delivery <= OLD."due_at", false))::int);
	RETURN NULL;
END $function$;
CREATE TRIGGER seller_order_figures AFTER INSERT ON orders FOR EACH ROW WHEN (new.status = ANY (ARRAY['completed'::text, 'cancelled'::text])) EXECUTE FUNCTION seller_order_figures_of_orders();
CREATE TRIGGER seller_order_figures_update AFTER UPDATE OF status, due_at ON orders FOR EACH ROW WHEN (old.status IS DISTINCT FROM new.status OR old.due_at IS DISTINCT FROM new.due_at) EXECUTE FUNCTION seller_order_figures_of_orders();
-- Deliveries added: an order whose first delivery this is becomes delivered, and its on-time share
-- follows its earliest delivery, whatever order and however many rows at once the deliveries
-- arrive in (the orders' figures before the statement are those of its deliveries not added by
-- it). An order in dispute is not counted (its status change counts it again).
CREATE OR REPLACE FUNCTION public.seller_order_figures_of_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	PERFORM "seller_order_figures_add"(o."seller_id", 0, 0,
			(before_first."at" IS NULL)::int,
			coalesce(after_first."at" <= o."due_at", false)::int - coalesce(before_first."at" <= o."due_at", false)::int)
		FROM (SELECT DISTINCT a."order_id" FROM added a) AS touched
		JOIN "orders" o ON o."id" = touched."order_id" AND o."status" <> 'disputed'
		CROSS JOIN LATERAL (SELECT min(d."created_at") AS "at" FROM "order_deliveries" d
			WHERE d."order_id" = o."id" AND NOT EXISTS (SELECT 1 FROM added a WHERE a."id" = d."id")) AS before_first
		CROSS JOIN LATERAL (SELECT min(d."created_at") AS "at" FROM "order_deliveries" d WHERE d."order_id" = o."id") AS after_first;
	RETURN NULL;
END $function$;
CREATE TRIGGER seller_order_figures_delivered AFTER INSERT ON order_deliveries REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION seller_order_figures_of_deliveries();
