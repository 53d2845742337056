CREATE TABLE "notification_settings" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"email" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"link_type" text NOT NULL,
	"link_id" uuid NOT NULL,
	"data" jsonb NOT NULL,
	"read_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "notification_settings" ADD CONSTRAINT "notification_settings_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "notifications_user_created_idx" ON "notifications" USING btree ("user_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "notifications_user_unread_idx" ON "notifications" USING btree ("user_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "notifications"."read_at" is null;--> statement-breakpoint
CREATE INDEX "notifications_created_idx" ON "notifications" USING btree ("created_at");--> statement-breakpoint
-- A notification for each person an event concerns, written by the event's own transaction
-- (src/modules/notifications/notifications-from-events.sql).
CREATE OR REPLACE FUNCTION public.notifications_from_event()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  data jsonb := NEW.payload->'data';
  -- An order request's author, and the party who answers it.
  requester text := CASE data->>'requestedBy' WHEN 'buyer' THEN data->>'buyerId' WHEN 'seller' THEN data->>'sellerId' END;
  answerer text := CASE data->>'requestedBy' WHEN 'buyer' THEN data->>'sellerId' WHEN 'seller' THEN data->>'buyerId' END;
  -- What a move of an order tells its parties.
  moved text := CASE
    WHEN data->>'from' = 'pending' AND data->>'to' = 'in_progress' THEN 'order.accepted'
    WHEN data->>'from' = 'delivered' AND data->>'to' = 'in_progress' THEN 'order.revision_requested'
    WHEN data->>'from' = 'disputed' THEN 'order.resolved'
    WHEN data->>'to' IN ('delivered', 'completed', 'cancelled', 'disputed') THEN 'order.' || (data->>'to')
  END;
BEGIN
  WITH rule (event, kind, recipient, link_type, link_id) AS (
    VALUES
      ('order.created', 'order.placed', data->>'sellerId', 'order', data->>'orderId'),
      ('order.status_changed', moved, data->>'buyerId', 'order', data->>'orderId'),
      ('order.status_changed', moved, data->>'sellerId', 'order', data->>'orderId'),
      ('order.tipped', 'order.tipped', data->>'sellerId', 'order', data->>'orderId'),
      ('order.refunded', 'order.refunded', data->>'buyerId', 'order', data->>'orderId'),
      ('order.refunded', 'order.refunded', data->>'sellerId', 'order', data->>'orderId'),
      ('order.request_opened', 'order.request_opened', answerer, 'order', data->>'orderId'),
      ('order.request_accepted', 'order.request_accepted', requester, 'order', data->>'orderId'),
      ('order.request_declined', 'order.request_declined', requester, 'order', data->>'orderId'),
      ('order.request_withdrawn', 'order.request_withdrawn', answerer, 'order', data->>'orderId'),
      ('order.request_expired', 'order.request_expired', requester, 'order', data->>'orderId'),
      ('offer.created', 'offer.received', data->>'recipientId', 'conversation', data->>'conversationId'),
      ('offer.accepted', 'offer.accepted', data->>'senderId', 'order', data->>'orderId'),
      ('offer.declined', 'offer.declined', data->>'senderId', 'conversation', data->>'conversationId'),
      ('offer.withdrawn', 'offer.withdrawn', data->>'recipientId', 'conversation', data->>'conversationId'),
      ('offer.expired', 'offer.expired', data->>'senderId', 'conversation', data->>'conversationId'),
      ('review.published', 'review.received', data->>'subjectId', 'order', data->>'orderId'),
      ('review.replied', 'review.replied', data->>'authorId', 'order', data->>'orderId'),
      ('payout.processed', 'payout.processed', data->>'userId', 'payout', data->>'payoutId'),
      ('payout.rejected', 'payout.rejected', data->>'userId', 'payout', data->>'payoutId'),
      ('kyc.approved', 'kyc.approved', data->>'userId', 'kyc_submission', data->>'submissionId'),
      ('kyc.rejected', 'kyc.rejected', data->>'userId', 'kyc_submission', data->>'submissionId'),
      ('service.approved', 'service.approved', data->>'sellerId', 'service', data->>'serviceId'),
      ('service.rejected', 'service.rejected', data->>'sellerId', 'service', data->>'serviceId'),
      ('seller.level_changed', 'seller.level_changed', data->>'userId', 'user', data->>'userId'),
      ('user.suspended', 'account.suspended', data->>'userId', 'user', data->>'userId'),
      ('user.unsuspended', 'account.unsuspended', data->>'userId', 'user', data->>'userId')
  ), created AS (
    INSERT INTO notifications (id, user_id, kind, link_type, link_id, data, created_at)
    SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing substring(int8send((extract(epoch from NEW.created_at) * 1000)::bigint) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid, users.id, rule.kind, rule.link_type, rule.link_id::uuid, data, NEW.created_at
    FROM rule JOIN users ON users.id = rule.recipient::uuid
    -- Never the person who acted: events that name their actor carry it in `by`.
    WHERE rule.event = NEW.payload->>'event' AND rule.kind IS NOT NULL AND rule.recipient IS DISTINCT FROM data->>'by'
    RETURNING id
  )
  INSERT INTO outbox_jobs (id, topic, payload, status, max_attempts, run_at, created_at)
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing substring(int8send((extract(epoch from NEW.created_at) * 1000)::bigint) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid, 'notification.deliver', jsonb_build_object('notificationId', created.id), 'pending', 12, NEW.run_at, NEW.created_at
  FROM created;
  RETURN NULL;
END $function$;
--> statement-breakpoint
CREATE TRIGGER outbox_jobs_notifications AFTER INSERT ON outbox_jobs FOR EACH ROW WHEN (new.topic = 'event'::text) EXECUTE FUNCTION notifications_from_event();
