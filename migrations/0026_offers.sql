CREATE TABLE "offers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"conversation_id" uuid NOT NULL,
	"sender_id" uuid NOT NULL,
	"recipient_id" uuid NOT NULL,
	"service_id" uuid,
	"title" text NOT NULL,
	"description" text NOT NULL,
	"price_cents" integer NOT NULL,
	"delivery_days" integer NOT NULL,
	"revisions" integer NOT NULL,
	"status" text NOT NULL,
	"decline_reason" text,
	"expires_at" timestamp with time zone NOT NULL,
	"order_id" uuid,
	"responded_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "offers_order_id_unique" UNIQUE("order_id"),
	CONSTRAINT "offers_price_positive" CHECK ("offers"."price_cents" > 0),
	CONSTRAINT "offers_delivery_days_range" CHECK ("offers"."delivery_days" between 1 and 90),
	CONSTRAINT "offers_revisions_range" CHECK ("offers"."revisions" between 0 and 10),
	CONSTRAINT "offers_two_parties" CHECK ("offers"."sender_id" <> "offers"."recipient_id"),
	CONSTRAINT "offers_accepted_has_order" CHECK (("offers"."status" = 'accepted') = ("offers"."order_id" is not null))
);
--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_sender_id_users_id_fk" FOREIGN KEY ("sender_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_recipient_id_users_id_fk" FOREIGN KEY ("recipient_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_service_id_services_id_fk" FOREIGN KEY ("service_id") REFERENCES "public"."services"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "offers_sender_created_idx" ON "offers" USING btree ("sender_id","created_at");--> statement-breakpoint
CREATE INDEX "offers_recipient_created_idx" ON "offers" USING btree ("recipient_id","created_at");--> statement-breakpoint
CREATE INDEX "offers_pending_expiry_idx" ON "offers" USING btree ("expires_at") WHERE "offers"."status" = 'pending';