-- The event log is appended by the commit of the transaction that wrote the event (decision 0117):
-- every `event` job of the outbox queues this trigger, which runs when its transaction commits.
-- The advisory lock is held from there to the end of the commit, so cursor N is visible before
-- cursor N+1 is taken: a reader paging with `after` never passes a cursor that a later commit
-- could still fill.
CREATE OR REPLACE FUNCTION public.event_log_append()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_advisory_xact_lock(7346211013);
  INSERT INTO event_log (id, cursor, event, occurred_at, data, appended_at)
    VALUES (NEW.id, nextval('event_log_cursor_seq'), NEW.payload->>'event', (NEW.payload->>'timestamp')::timestamptz, NEW.payload->'data', clock_timestamp())
    ON CONFLICT (id) DO NOTHING;
  RETURN NULL;
END $function$;
CREATE CONSTRAINT TRIGGER outbox_jobs_event_log AFTER INSERT ON outbox_jobs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (new.topic = 'event'::text) EXECUTE FUNCTION event_log_append();
