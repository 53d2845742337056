-- Counters of the admin statistics: triggers append deltas in the transaction of the change;
-- the worker folds them into stat_counters.
CREATE OR REPLACE FUNCTION public.stat_count(counter text, delta bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
	IF "delta" <> 0 THEN
		INSERT INTO "stat_counter_deltas" ("name", "delta") VALUES ("counter", "delta");
	END IF;
END $function$;
