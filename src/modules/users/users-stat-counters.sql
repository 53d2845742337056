-- users.total, users.active (activated, not suspended), users.staff (staff or superuser) and
-- users.suspended of the admin statistics.
CREATE OR REPLACE FUNCTION public.users_stat_counters()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
	old_total int := 0; old_active int := 0; old_staff int := 0; old_suspended int := 0;
	new_total int := 0; new_active int := 0; new_staff int := 0; new_suspended int := 0;
BEGIN
	IF TG_OP <> 'INSERT' THEN
		old_total := 1;
		old_active := (OLD."is_active" AND OLD."suspended_at" IS NULL)::int;
		old_staff := (OLD."is_staff" OR OLD."is_superuser")::int;
		old_suspended := (OLD."suspended_at" IS NOT NULL)::int;
	END IF;
	IF TG_OP <> 'DELETE' THEN
		new_total := 1;
		new_active := (NEW."is_active" AND NEW."suspended_at" IS NULL)::int;
		new_staff := (NEW."is_staff" OR NEW."is_superuser")::int;
		new_suspended := (NEW."suspended_at" IS NOT NULL)::int;
	END IF;
	PERFORM "stat_count"('users.total', new_total - old_total);
	PERFORM "stat_count"('users.active', new_active - old_active);
	PERFORM "stat_count"('users.staff', new_staff - old_staff);
	PERFORM "stat_count"('users.suspended', new_suspended - old_suspended);
	RETURN NULL;
END $function$;
CREATE TRIGGER users_stat_counters AFTER INSERT OR DELETE OR UPDATE OF is_active, is_staff, is_superuser, suspended_at ON users FOR EACH ROW EXECUTE FUNCTION users_stat_counters();
