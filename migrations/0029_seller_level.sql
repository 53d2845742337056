ALTER TABLE "users" ADD COLUMN "seller_level" text DEFAULT 'new' NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "level_evaluated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_seller_level_check" CHECK ("users"."seller_level" in ('new', 'level_one', 'level_two', 'top_rated'));