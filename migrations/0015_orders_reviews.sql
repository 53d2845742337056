CREATE TABLE "order_deliveries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"order_id" uuid NOT NULL,
	"message" text NOT NULL,
	"file_ids" uuid[] NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"id" uuid PRIMARY KEY NOT NULL,
	"buyer_id" uuid NOT NULL,
	"seller_id" uuid NOT NULL,
	"service_id" uuid NOT NULL,
	"package_id" uuid NOT NULL,
	"service_title" text NOT NULL,
	"package_name" text NOT NULL,
	"status" text NOT NULL,
	"requirements" text DEFAULT '' NOT NULL,
	"price_cents" integer NOT NULL,
	"extras" jsonb NOT NULL,
	"total_cents" integer NOT NULL,
	"platform_fee_cents" integer NOT NULL,
	"delivery_days" integer NOT NULL,
	"revisions_left" integer,
	"status_reason" text,
	"due_at" timestamp with time zone,
	"delivered_at" timestamp with time zone,
	"auto_complete_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "orders_total_positive" CHECK ("orders"."total_cents" > 0),
	CONSTRAINT "orders_fee_within_total" CHECK ("orders"."platform_fee_cents" >= 0 and "orders"."platform_fee_cents" <= "orders"."total_cents"),
	CONSTRAINT "orders_revisions_not_negative" CHECK ("orders"."revisions_left" is null or "orders"."revisions_left" >= 0)
);
--> statement-breakpoint
CREATE TABLE "reviews" (
	"id" uuid PRIMARY KEY NOT NULL,
	"order_id" uuid NOT NULL,
	"service_id" uuid NOT NULL,
	"seller_id" uuid NOT NULL,
	"reviewer_id" uuid NOT NULL,
	"rating" integer NOT NULL,
	"communication" integer,
	"quality" integer,
	"delivery" integer,
	"comment" text DEFAULT '' NOT NULL,
	"reply" text,
	"replied_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "reviews_order_id_unique" UNIQUE("order_id"),
	CONSTRAINT "reviews_rating_range" CHECK ("rating" between 1 and 5),
	CONSTRAINT "reviews_communication_range" CHECK ("communication" is null or "communication" between 1 and 5),
	CONSTRAINT "reviews_quality_range" CHECK ("quality" is null or "quality" between 1 and 5),
	CONSTRAINT "reviews_delivery_range" CHECK ("delivery" is null or "delivery" between 1 and 5)
);
--> statement-breakpoint
CREATE TABLE "seller_ratings" (
	"seller_id" uuid PRIMARY KEY NOT NULL,
	"reviews_count" integer DEFAULT 0 NOT NULL,
	"rating_sum" integer DEFAULT 0 NOT NULL,
	"ones" integer DEFAULT 0 NOT NULL,
	"twos" integer DEFAULT 0 NOT NULL,
	"threes" integer DEFAULT 0 NOT NULL,
	"fours" integer DEFAULT 0 NOT NULL,
	"fives" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "order_deliveries" ADD CONSTRAINT "order_deliveries_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_buyer_id_users_id_fk" FOREIGN KEY ("buyer_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_seller_id_users_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_seller_id_users_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_reviewer_id_users_id_fk" FOREIGN KEY ("reviewer_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "seller_ratings" ADD CONSTRAINT "seller_ratings_seller_id_users_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "order_deliveries_order_idx" ON "order_deliveries" USING btree ("order_id","created_at");--> statement-breakpoint
CREATE INDEX "orders_buyer_created_idx" ON "orders" USING btree ("buyer_id","created_at");--> statement-breakpoint
CREATE INDEX "orders_seller_created_idx" ON "orders" USING btree ("seller_id","created_at");--> statement-breakpoint
CREATE INDEX "orders_service_status_idx" ON "orders" USING btree ("service_id","status");--> statement-breakpoint
CREATE INDEX "orders_status_created_idx" ON "orders" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "orders_auto_complete_idx" ON "orders" USING btree ("auto_complete_at") WHERE "orders"."status" = 'delivered';--> statement-breakpoint
CREATE INDEX "reviews_service_created_idx" ON "reviews" USING btree ("service_id","created_at");--> statement-breakpoint
CREATE INDEX "reviews_seller_idx" ON "reviews" USING btree ("seller_id");