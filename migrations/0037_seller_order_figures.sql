-- Both tables locked against writes first, deliveries before orders, in the order a delivery takes
-- them (its row, then the order's status): a delivery under way finishes before the migration goes
-- on, instead of the two waiting for each other.
LOCK TABLE "order_deliveries", "orders" IN SHARE ROW EXCLUSIVE MODE;--> statement-breakpoint
CREATE TABLE "seller_order_figures" (
	"seller_id" uuid PRIMARY KEY NOT NULL,
	"completed" integer DEFAULT 0 NOT NULL,
	"cancelled" integer DEFAULT 0 NOT NULL,
	"delivered" integer DEFAULT 0 NOT NULL,
	"on_time" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "seller_order_figures" ADD CONSTRAINT "seller_order_figures_seller_id_users_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
-- An index of this name left invalid by a failed concurrent build is refused, not taken as built
-- (docs/operations.md, "Deploying a new version").
DO $$ BEGIN
	IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('public."orders_seller_open_idx"') AND NOT indisvalid) THEN
		RAISE EXCEPTION 'index orders_seller_open_idx on orders is invalid (a concurrent build failed): drop it and build it again';
	END IF;
END $$;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "orders_seller_open_idx" ON "orders" USING btree ("seller_id") WHERE "orders"."status" in ('pending', 'in_progress', 'delivered', 'disputed');--> statement-breakpoint
-- The functions and triggers of src/modules/orders/seller-order-figures.sql. The triggers come before
-- the count below: with both tables locked against writes (first statement) until this migration
-- commits, the count misses no change and counts none twice.
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
--> statement-breakpoint
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
--> statement-breakpoint
CREATE TRIGGER seller_order_figures AFTER INSERT ON orders FOR EACH ROW WHEN (new.status = ANY (ARRAY['completed'::text, 'cancelled'::text])) EXECUTE FUNCTION seller_order_figures_of_orders();
--> statement-breakpoint
CREATE TRIGGER seller_order_figures_update AFTER UPDATE OF status, due_at ON orders FOR EACH ROW WHEN (old.status IS DISTINCT FROM new.status OR old.due_at IS DISTINCT FROM new.due_at) EXECUTE FUNCTION seller_order_figures_of_orders();
--> statement-breakpoint
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
--> statement-breakpoint
CREATE TRIGGER seller_order_figures_delivered AFTER INSERT ON order_deliveries REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION seller_order_figures_of_deliveries();
--> statement-breakpoint
-- Every seller's figures from the orders there are.
INSERT INTO "seller_order_figures" ("seller_id", "completed", "cancelled", "delivered", "on_time")
	SELECT o."seller_id", count(*) FILTER (WHERE o."status" = 'completed'), count(*) FILTER (WHERE o."status" = 'cancelled'),
		count(*) FILTER (WHERE o."status" <> 'disputed' AND first_delivery."at" IS NOT NULL),
		count(*) FILTER (WHERE o."status" <> 'disputed' AND first_delivery."at" <= o."due_at")
	FROM "orders" o
	LEFT JOIN LATERAL (SELECT min(d."created_at") AS "at" FROM "order_deliveries" d WHERE d."order_id" = o."id") AS first_delivery ON true
	WHERE o."status" IN ('completed', 'cancelled') OR first_delivery."at" IS NOT NULL
	GROUP BY o."seller_id";
