-- The delivery-time filter's matches, read first when they are few (decision 0244), with the
-- columns the other filters and the page's sort read. Building it blocks writes to services for
-- as long as it reads them (well under a second at 100,000 services); a large deployment builds it
-- beforehand with CREATE INDEX CONCURRENTLY, and this statement then finds it (docs/operations.md).
CREATE INDEX IF NOT EXISTS "services_active_delivery_idx" ON "services" USING btree ("starting_delivery_days","id","created_at","starting_price_cents","rating_average","seller_id","category_id") WHERE "services"."status" = 'active' and "services"."deleted_at" is null;