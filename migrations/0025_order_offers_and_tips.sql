ALTER TABLE "orders" ALTER COLUMN "service_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "orders" ALTER COLUMN "package_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "reviews" ALTER COLUMN "service_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "offer_id" uuid;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "offer_id" uuid;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "tip_cents" integer;--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "tipped_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_offer_id_unique" UNIQUE("offer_id");--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_tip_positive" CHECK ("orders"."tip_cents" is null or "orders"."tip_cents" > 0);