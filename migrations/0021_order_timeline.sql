ALTER TABLE "orders" ADD COLUMN "timeline" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- Every order has its conversation, opened by the statement that places it. Orders placed before
-- that rule get theirs here (ids in the UUIDv7 layout, timed at the order's creation).
WITH "missing" AS (
	SELECT o."id" AS "order_id", o."buyer_id", o."seller_id", o."created_at",
		encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(floor(extract(epoch FROM o."created_at") * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid AS "conversation_id"
	FROM "orders" o
	WHERE NOT EXISTS (SELECT 1 FROM "conversations" c WHERE c."order_id" = o."id")
), "opened" AS (
	INSERT INTO "conversations" ("id", "order_id", "created_at") SELECT "conversation_id", "order_id", "created_at" FROM "missing"
)
INSERT INTO "conversation_participants" ("conversation_id", "user_id", "activity_at")
SELECT m."conversation_id", p."user_id", m."created_at" FROM "missing" m CROSS JOIN LATERAL (VALUES (m."buyer_id"), (m."seller_id")) AS p("user_id");
