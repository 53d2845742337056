CREATE TABLE "kyc_submissions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"status" text NOT NULL,
	"first_name" text NOT NULL,
	"last_name" text NOT NULL,
	"date_of_birth" date NOT NULL,
	"country" text NOT NULL,
	"phone" text NOT NULL,
	"document_type" text,
	"document_front_id" uuid,
	"document_back_id" uuid,
	"selfie_id" uuid,
	"submitted_at" timestamp with time zone,
	"reviewed_at" timestamp with time zone,
	"reviewed_by" uuid,
	"rejection_reason" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "kyc_submissions" ADD CONSTRAINT "kyc_submissions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kyc_submissions" ADD CONSTRAINT "kyc_submissions_document_front_id_uploads_id_fk" FOREIGN KEY ("document_front_id") REFERENCES "public"."uploads"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kyc_submissions" ADD CONSTRAINT "kyc_submissions_document_back_id_uploads_id_fk" FOREIGN KEY ("document_back_id") REFERENCES "public"."uploads"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kyc_submissions" ADD CONSTRAINT "kyc_submissions_selfie_id_uploads_id_fk" FOREIGN KEY ("selfie_id") REFERENCES "public"."uploads"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kyc_submissions" ADD CONSTRAINT "kyc_submissions_reviewed_by_users_id_fk" FOREIGN KEY ("reviewed_by") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kyc_submissions_user_created_idx" ON "kyc_submissions" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "kyc_submissions_status_created_idx" ON "kyc_submissions" USING btree ("status","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "kyc_submissions_user_open_idx" ON "kyc_submissions" USING btree ("user_id") WHERE "kyc_submissions"."status" <> 'rejected';