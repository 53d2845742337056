CREATE TABLE "buyer_ratings" (
	"buyer_id" uuid PRIMARY KEY NOT NULL,
	"reviews_count" integer DEFAULT 0 NOT NULL,
	"rating_sum" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "reviews" DROP CONSTRAINT "reviews_order_id_unique";--> statement-breakpoint
DROP INDEX "reviews_service_created_idx";--> statement-breakpoint
ALTER TABLE "reviews" ADD COLUMN "author_role" text DEFAULT 'buyer' NOT NULL;--> statement-breakpoint
ALTER TABLE "reviews" ADD COLUMN "subject_id" uuid;--> statement-breakpoint
ALTER TABLE "reviews" ADD COLUMN "order_completed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "reviews" ADD COLUMN "published_at" timestamp with time zone;--> statement-breakpoint
-- Reviews written before two-way reviews are the buyers' and stay public: their subject is the seller, and they were published when written.
UPDATE "reviews" SET "subject_id" = "reviews"."seller_id", "published_at" = "reviews"."created_at", "order_completed_at" = coalesce("orders"."completed_at", "reviews"."created_at") FROM "orders" WHERE "orders"."id" = "reviews"."order_id";--> statement-breakpoint
ALTER TABLE "reviews" ALTER COLUMN "subject_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "reviews" ALTER COLUMN "order_completed_at" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "buyer_ratings" ADD CONSTRAINT "buyer_ratings_buyer_id_users_id_fk" FOREIGN KEY ("buyer_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_subject_id_users_id_fk" FOREIGN KEY ("subject_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "reviews_order_author_role_unique" ON "reviews" USING btree ("order_id","author_role");--> statement-breakpoint
CREATE INDEX "reviews_service_published_idx" ON "reviews" USING btree ("service_id","published_at") WHERE "reviews"."published_at" is not null and "reviews"."author_role" = 'buyer';--> statement-breakpoint
CREATE INDEX "reviews_subject_published_idx" ON "reviews" USING btree ("subject_id","author_role","published_at") WHERE "reviews"."published_at" is not null;--> statement-breakpoint
CREATE INDEX "reviews_hidden_idx" ON "reviews" USING btree ("order_completed_at") WHERE "reviews"."published_at" is null;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_author_role" CHECK ("reviews"."author_role" in ('buyer', 'seller'));--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_criteria_by_buyer" CHECK ("reviews"."author_role" = 'buyer' or ("reviews"."communication" is null and "reviews"."quality" is null and "reviews"."delivery" is null));