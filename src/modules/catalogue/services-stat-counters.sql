-- services.<status> of the admin statistics: services not deleted, by status.
CREATE OR REPLACE FUNCTION public.services_stat_counters()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	IF TG_OP <> 'INSERT' AND OLD."deleted_at" IS NULL THEN
		PERFORM "stat_count"('services.' || OLD."status", -1);
	END IF;
	IF TG_OP <> 'DELETE' AND NEW."deleted_at" IS NULL THEN
		PERFORM "stat_count"('services.' || NEW."status", 1);
	END IF;
	RETURN NULL;
END $function$;
CREATE TRIGGER services_stat_counters AFTER INSERT OR DELETE ON services FOR EACH ROW EXECUTE FUNCTION services_stat_counters();
CREATE TRIGGER services_stat_counters_update AFTER UPDATE OF status, deleted_at ON services FOR EACH ROW WHEN (old.status IS DISTINCT FROM new.status OR old.deleted_at IS DISTINCT FROM new.deleted_at) EXECUTE FUNCTION services_stat_counters();
