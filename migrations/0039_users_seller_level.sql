-- The sellers above `new` (few of the users), read first by a list filtered by their levels
-- (decision 0235). Building it blocks writes to users for as long as it reads them.
CREATE INDEX "users_seller_level_idx" ON "users" USING btree ("seller_level") WHERE "users"."seller_level" <> 'new';