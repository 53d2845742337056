CREATE SEQUENCE "public"."event_log_cursor_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "event_log" (
	"id" uuid PRIMARY KEY NOT NULL,
	"cursor" bigint NOT NULL,
	"event" text NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"data" jsonb NOT NULL,
	"appended_at" timestamp with time zone NOT NULL,
	CONSTRAINT "event_log_cursor_unique" UNIQUE("cursor")
);
