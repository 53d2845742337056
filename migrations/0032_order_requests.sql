CREATE TABLE "order_requests" (
	"id" uuid PRIMARY KEY NOT NULL,
	"order_id" uuid NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"requested_by" text NOT NULL,
	"requester_id" uuid NOT NULL,
	"reason" text NOT NULL,
	"days" integer,
	"amount_cents" integer,
	"expires_at" timestamp with time zone NOT NULL,
	"responded_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "order_requests_days_for_extensions" CHECK (("order_requests"."type" = 'extension') = ("order_requests"."days" is not null) and ("order_requests"."days" is null or "order_requests"."days" between 1 and 30)),
	CONSTRAINT "order_requests_amount_for_partial_refunds" CHECK (("order_requests"."type" = 'partial_refund') = ("order_requests"."amount_cents" is not null) and ("order_requests"."amount_cents" is null or "order_requests"."amount_cents" > 0)),
	CONSTRAINT "order_requests_responded_once_closed" CHECK (("order_requests"."status" = 'open') = ("order_requests"."responded_at" is null))
);
--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "placement_fee_cents" integer;--> statement-breakpoint
ALTER TABLE "order_requests" ADD CONSTRAINT "order_requests_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_requests" ADD CONSTRAINT "order_requests_requester_id_users_id_fk" FOREIGN KEY ("requester_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "order_requests_one_open_idx" ON "order_requests" USING btree ("order_id") WHERE "order_requests"."status" = 'open';--> statement-breakpoint
CREATE INDEX "order_requests_order_created_idx" ON "order_requests" USING btree ("order_id","created_at");--> statement-breakpoint
CREATE INDEX "order_requests_open_expiry_idx" ON "order_requests" USING btree ("expires_at") WHERE "order_requests"."status" = 'open';--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_placement_fee_within_total" CHECK ("orders"."placement_fee_cents" is null or ("orders"."placement_fee_cents" >= 0 and "orders"."placement_fee_cents" <= "orders"."total_cents"));--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.orders_stat_counters()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	IF TG_OP <> 'INSERT' THEN
		PERFORM "stat_count"('orders.' || OLD."status", -1);
	END IF;
	PERFORM "stat_count"('orders.' || NEW."status", 1);
	IF NEW."status" = 'completed' AND (TG_OP = 'INSERT' OR OLD."status" <> 'completed') THEN
		PERFORM "stat_count"('orders.gross_volume_cents', NEW."total_cents" - NEW."refunded_cents");
	END IF;
	RETURN NULL;
END $function$;
--> statement-breakpoint
-- Completed orders split before counted their whole total: take back what went to their buyers.
SELECT "stat_count"('orders.gross_volume_cents', -coalesce(sum("refunded_cents"), 0)) FROM "orders" WHERE "status" = 'completed';
