-- The delivery-time filter's matches, read first when they are few (decision 0244), with the
-- columns the other filters and the page's sort read. Building it blocks writes to services for
-- as long as it reads them (well under a second at 100,000 services); a large deployment builds it
-- beforehand with CREATE INDEX CONCURRENTLY, and this statement then finds it (docs/operations.md).
-- An index of this name left invalid by a failed concurrent build is refused, not taken as built
-- (docs/operations.md, "Deploying a new version").
DO $$ BEGIN
	IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('public."services_active_delivery_idx"') AND NOT indisvalid) THEN
		RAISE EXCEPTION 'index services_active_delivery_idx on services is invalid (a concurrent build failed): drop it and build it again';
	END IF;
END $$;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "services_active_delivery_idx" ON "services" USING btree ("starting_delivery_days","id","created_at","starting_price_cents","rating_average","seller_id","category_id") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;