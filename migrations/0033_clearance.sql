CREATE TABLE "clearances" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"order_id" uuid NOT NULL,
	"amount_cents" bigint NOT NULL,
	"reversed_cents" bigint DEFAULT 0 NOT NULL,
	"available_at" timestamp with time zone NOT NULL,
	"settled_at" timestamp with time zone,
	"credit_transaction_id" uuid NOT NULL,
	"clearance_transaction_id" uuid,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "clearances_amount_positive" CHECK ("clearances"."amount_cents" > 0),
	CONSTRAINT "clearances_reversed_within_amount" CHECK ("clearances"."reversed_cents" >= 0 and "clearances"."reversed_cents" <= "clearances"."amount_cents"),
	CONSTRAINT "clearances_cleared_when_settled" CHECK ("clearances"."clearance_transaction_id" is null or "clearances"."settled_at" is not null)
);
--> statement-breakpoint
ALTER TABLE "orders" DROP CONSTRAINT "orders_refund_within_total";--> statement-breakpoint
ALTER TABLE "clearances" ADD CONSTRAINT "clearances_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "clearances" ADD CONSTRAINT "clearances_credit_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("credit_transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "clearances" ADD CONSTRAINT "clearances_clearance_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("clearance_transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "clearances_due_idx" ON "clearances" USING btree ("available_at") WHERE "clearances"."settled_at" is null;--> statement-breakpoint
CREATE INDEX "clearances_user_open_idx" ON "clearances" USING btree ("user_id","available_at") WHERE "clearances"."settled_at" is null;--> statement-breakpoint
CREATE INDEX "clearances_order_idx" ON "clearances" USING btree ("order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "clearances_credit_transaction_idx" ON "clearances" USING btree ("credit_transaction_id");--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_refund_within_total" CHECK ("orders"."refunded_cents" >= 0 and "orders"."refunded_cents" + "orders"."platform_fee_cents" <= "orders"."total_cents" + coalesce("orders"."tip_cents", 0));--> statement-breakpoint
-- wallet.clearing_held: the sum of every user's clearing balance (source: src/modules/wallet/clearing-stat-counter.sql). No clearing account exists before this migration, so the counter starts at 0.
CREATE OR REPLACE FUNCTION "ledger_clearing_stat_counter"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM "stat_count"('wallet.clearing_held', NEW."balance_cents" - OLD."balance_cents");
	RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "ledger_clearing_stat_counter" AFTER UPDATE OF "balance_cents" ON "ledger_accounts" FOR EACH ROW
	WHEN (NEW."kind" = 'clearing' AND OLD."balance_cents" IS DISTINCT FROM NEW."balance_cents")
	EXECUTE FUNCTION "ledger_clearing_stat_counter"();
