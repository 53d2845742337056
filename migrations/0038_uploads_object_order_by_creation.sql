-- The wider index is built first under another name, so that reads keep using the old one while it
-- builds (CREATE INDEX blocks writes to uploads, not reads); the old one is dropped last, which
-- holds the table's exclusive lock only from there to the commit.
CREATE INDEX "uploads_object_idx_next" ON "uploads" USING btree ("object_type","object_id","tag","order","created_at");--> statement-breakpoint
DROP INDEX "uploads_object_idx";--> statement-breakpoint
ALTER INDEX "uploads_object_idx_next" RENAME TO "uploads_object_idx";
