-- The event log is appended by the commit of the transaction that wrote the event (decision 0117):
-- every `event` job of the outbox queues this trigger, which runs when its transaction commits.
-- The advisory lock is held from there to the end of the commit, so cursor N is visible before
-- cursor N+1 is taken: a reader paging with `after` never passes a cursor that a later commit
-- could still fill. Rows follow the event's job, never the other way round.
CREATE OR REPLACE FUNCTION event_log_append() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7346211013);
  INSERT INTO event_log (id, cursor, event, occurred_at, data, appended_at)
    VALUES (NEW.id, nextval('event_log_cursor_seq'), NEW.payload->>'event', (NEW.payload->>'timestamp')::timestamptz, NEW.payload->'data', clock_timestamp())
    ON CONFLICT (id) DO NOTHING;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS outbox_jobs_event_log ON outbox_jobs;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER outbox_jobs_event_log AFTER INSERT ON outbox_jobs DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.topic = 'event') EXECUTE FUNCTION event_log_append();
--> statement-breakpoint
-- The log so far keeps its cursors; the events whose jobs have not run yet follow, in the order
-- they were written.
INSERT INTO event_log (id, cursor, event, occurred_at, data, appended_at)
  SELECT id, cursor, event, occurred_at, data, recorded_at FROM webhook_events;
--> statement-breakpoint
INSERT INTO event_log (id, cursor, event, occurred_at, data, appended_at)
  SELECT j.id, coalesce((SELECT max(cursor) FROM event_log), 0) + row_number() OVER (ORDER BY j.created_at, j.id),
    j.payload->>'event', (j.payload->>'timestamp')::timestamptz, j.payload->'data', now()
  FROM outbox_jobs j
  WHERE j.topic = 'event' AND NOT EXISTS (SELECT 1 FROM event_log l WHERE l.id = j.id);
--> statement-breakpoint
SELECT setval('event_log_cursor_seq', coalesce((SELECT max(cursor) FROM event_log), 0) + 1, false);
