CREATE TABLE "saved_services" (
	"user_id" uuid NOT NULL,
	"service_id" uuid NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "saved_services_user_id_service_id_pk" PRIMARY KEY("user_id","service_id")
);
--> statement-breakpoint
DROP INDEX "services_active_created_idx";--> statement-breakpoint
DROP INDEX "services_active_price_idx";--> statement-breakpoint
DROP INDEX "services_active_rating_idx";--> statement-breakpoint
DROP INDEX "services_active_category_created_idx";--> statement-breakpoint
DROP INDEX "services_active_category_price_idx";--> statement-breakpoint
DROP INDEX "services_active_category_rating_idx";--> statement-breakpoint
ALTER TABLE "services" ADD COLUMN "starting_delivery_days" integer;--> statement-breakpoint
UPDATE "services" SET "starting_delivery_days" = (SELECT p."delivery_days" FROM "service_packages" p WHERE p."service_id" = "services"."id" ORDER BY p."price_cents", p."position" LIMIT 1);--> statement-breakpoint
ALTER TABLE "services" ADD COLUMN "saved_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "saved_services" ADD CONSTRAINT "saved_services_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saved_services" ADD CONSTRAINT "saved_services_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "saved_services_user_created_idx" ON "saved_services" USING btree ("user_id","created_at","service_id");--> statement-breakpoint
CREATE INDEX "saved_services_service_idx" ON "saved_services" USING btree ("service_id");--> statement-breakpoint
CREATE INDEX "services_active_created_idx" ON "services" USING btree ("created_at","id","starting_price_cents","starting_delivery_days","rating_average","seller_id","category_id") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "services_active_price_idx" ON "services" USING btree ("starting_price_cents","id","starting_delivery_days","rating_average","seller_id","category_id","created_at") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "services_active_rating_idx" ON "services" USING btree ("rating_average","id","starting_price_cents","starting_delivery_days","seller_id","category_id","created_at") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "services_active_category_created_idx" ON "services" USING btree ("category_id","created_at","id","starting_price_cents","starting_delivery_days","rating_average","seller_id") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "services_active_category_price_idx" ON "services" USING btree ("category_id","starting_price_cents","id","starting_delivery_days","rating_average","seller_id","created_at") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "services_active_category_rating_idx" ON "services" USING btree ("category_id","rating_average","id","starting_price_cents","starting_delivery_days","seller_id","created_at") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.catalogue_search_correction(search text)
 RETURNS tsquery
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
  SELECT to_tsquery('english', string_agg(per_word.alternatives, ' & ' ORDER BY per_word.position))
  FROM (
    SELECT wanted.position, '(' || string_agg(quote_literal(nearest.word), ' | ') || ')' AS alternatives
    FROM (
      SELECT split.word AS input, min(split.n) AS position
      FROM regexp_split_to_table(lower(search), '[^a-z0-9]+') WITH ORDINALITY AS split(word, n)
      WHERE length(split.word) BETWEEN 3 AND 40
      GROUP BY split.word
      ORDER BY min(split.n)
      LIMIT 8
    ) AS wanted
    CROSS JOIN LATERAL (
      SELECT closest.word FROM (
        SELECT w.word, similarity(w.word, wanted.input) AS score FROM search_words w
        ORDER BY w.word <-> wanted.input
        LIMIT 3
      ) AS closest
      WHERE closest.score >= 0.2
    ) AS nearest
    GROUP BY wanted.position
  ) AS per_word
$function$;
