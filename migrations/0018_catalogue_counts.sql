CREATE TABLE "category_service_counts" (
	"category_id" uuid PRIMARY KEY NOT NULL,
	"active_services" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "search_words" (
	"word" text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
ALTER TABLE "category_service_counts" ADD CONSTRAINT "category_service_counts_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "search_words_trgm_idx" ON "search_words" USING gist ("word" gist_trgm_ops);--> statement-breakpoint
CREATE INDEX "services_active_price_idx" ON "services" USING btree ("starting_price_cents","id") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "services_active_rating_idx" ON "services" USING btree ("rating_average","id") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "services_active_category_created_idx" ON "services" USING btree ("category_id","created_at","id") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "services_active_category_price_idx" ON "services" USING btree ("category_id","starting_price_cents","id") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "services_active_category_rating_idx" ON "services" USING btree ("category_id","rating_average","id") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;